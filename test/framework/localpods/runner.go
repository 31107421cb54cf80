package localpods

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Runner runs the Deployments of one management cluster.
type Runner struct {
	c          client.Client
	kubeconfig string
	dir        string
	programs   map[string]Program
	log        logr.Logger

	mu   sync.Mutex
	pods map[types.NamespacedName]*pod
}

// New returns a Runner of the cluster c (whose admin kubeconfig file the processes get), with
// the given programs by image name; pods' folders and logs go under dir.
func New(c client.Client, kubeconfig, dir string, programs map[string]Program, log logr.Logger) *Runner {
	return &Runner{c: c, kubeconfig: kubeconfig, dir: dir, programs: programs, log: log, pods: map[types.NamespacedName]*pod{}}
}

// Run syncs the pods with the Deployments every half second until ctx ends, then stops them.
func (r *Runner) Run(ctx context.Context) {
	defer r.stopAll()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		if err := r.sync(ctx); err != nil && ctx.Err() == nil {
			r.log.Info("sync", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// known reports whether every container of d runs a program of r.
func (r *Runner) known(d *appsv1.Deployment) bool {
	cs := d.Spec.Template.Spec.Containers
	for _, c := range cs {
		if _, ok := r.programs[imageName(c.Image)]; !ok {
			return false
		}
	}
	return len(cs) > 0
}

func (r *Runner) sync(ctx context.Context) error {
	var list appsv1.DeploymentList
	if err := r.c.List(ctx, &list); err != nil {
		return err
	}
	seen := map[types.NamespacedName]bool{}
	for i := range list.Items {
		d := &list.Items[i]
		if !r.known(d) || (d.Spec.Replicas != nil && *d.Spec.Replicas == 0) || d.DeletionTimestamp != nil {
			continue
		}
		key := client.ObjectKeyFromObject(d)
		seen[key] = true
		p := r.pod(key)
		if p == nil || p.hash != templateHash(d.Spec.Template) {
			if err := r.start(ctx, d, p); err != nil {
				if !errors.Is(err, errWaiting) {
					r.log.Info("cannot start", "deployment", key.String(), "error", err.Error())
				}
				continue
			}
			p = r.pod(key)
		}
		if err := r.markAvailable(ctx, d, p.ready(ctx)); err != nil {
			r.log.Info("status", "deployment", key.String(), "error", err.Error())
		}
	}
	r.mu.Lock()
	var gone []*pod
	for key, p := range r.pods {
		if !seen[key] {
			gone = append(gone, p)
			delete(r.pods, key)
		}
	}
	r.mu.Unlock()
	for _, p := range gone {
		r.log.Info("stopping", "deployment", p.key.String())
		p.stop()
	}
	return nil
}

func (r *Runner) pod(key types.NamespacedName) *pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pods[key]
}

// start (re)starts d's pod in place of old.
func (r *Runner) start(ctx context.Context, d *appsv1.Deployment, old *pod) error {
	dir := filepath.Join(r.dir, d.Namespace+"_"+d.Name)
	p, cmds, err := r.newPod(ctx, d, dir)
	if err != nil {
		return err
	}
	if old != nil {
		old.stop()
	}
	r.log.Info("starting", "deployment", p.key.String(), "ports", fmt.Sprint(p.ports))
	p.run(context.WithoutCancel(ctx), cmds, r.dir)
	r.mu.Lock()
	r.pods[p.key] = p
	r.mu.Unlock()
	return nil
}

func (r *Runner) stopAll() {
	r.mu.Lock()
	pods := r.pods
	r.pods = map[types.NamespacedName]*pod{}
	r.mu.Unlock()
	for _, p := range pods {
		p.stop()
	}
}

// probeClient sends the readiness probes: one client for all (a new transport per probe would
// keep an idle connection per probe, every half second), no kept connections, and, as the
// kubelet's probes, no certificate check.
var probeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // G402: a probe, as the kubelet's, does not verify

// ready reports whether the pod's readiness probe answers 2xx or 3xx (no probe: it runs).
func (p *pod) ready(ctx context.Context) bool {
	if p.probe == nil {
		return true
	}
	port := p.containerPort(p.probe.Port)
	local, ok := p.ports[port]
	if !ok {
		return false
	}
	scheme := "http"
	if p.probe.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, local, p.probe.Path), nil)
	if err != nil {
		return false
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode < 400
}

// containerPort is the number of a port given by number or by a container port's name.
func (p *pod) containerPort(port intstr.IntOrString) int32 {
	if port.Type == intstr.String {
		return p.named[port.StrVal]
	}
	return port.IntVal
}

// markAvailable writes the status the Deployment controller would: one replica, available when
// ready.
func (r *Runner) markAvailable(ctx context.Context, d *appsv1.Deployment, ready bool) error {
	n := int32(0)
	if ready {
		n = 1
	}
	st := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: n, AvailableReplicas: n,
		UnavailableReplicas: 1 - n}
	available := corev1.ConditionFalse
	if ready {
		available = corev1.ConditionTrue
	}
	now := metav1.Now()
	st.Conditions = []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: available, Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
	}
	if sameStatus(d.Status, st) {
		return nil
	}
	d.Status = st
	return r.c.Status().Update(ctx, d)
}

func sameStatus(a, b appsv1.DeploymentStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || a.AvailableReplicas != b.AvailableReplicas || a.ReadyReplicas != b.ReadyReplicas ||
		a.Replicas != b.Replicas || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		if a.Conditions[i].Type != b.Conditions[i].Type || a.Conditions[i].Status != b.Conditions[i].Status {
			return false
		}
	}
	return true
}

// Logs is the folder of the processes' logs: <namespace>_<deployment>_<container index>.log.
func (r *Runner) Logs() string { return r.dir }
