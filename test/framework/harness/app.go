package harness

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// AppNamespace holds the Windows workload of the demo in the workload cluster.
const AppNamespace = "iis"

// App is a Windows Deployment (an IIS-like web app) with a PodDisruptionBudget.
type App struct {
	Name     string
	Replicas int32
	// MinAvailable of the PodDisruptionBudget (0 = no PDB).
	MinAvailable int32
	// NodeSelector is added to kubernetes.io/os=windows (e.g. a windows-build).
	NodeSelector map[string]string
	// Image is the container image; a process-isolated Windows container must match the
	// node's build, so an app that outlives an OS upgrade either runs Hyper-V isolated or
	// selects nodes by build.
	Image string
	// HyperVIsolation runs the pods with RuntimeClass windows-hyperv.
	HyperVIsolation bool
}

// RuntimeClassHyperV runs Windows pods Hyper-V isolated (containerd handler runhcs-wcow-hypervisor).
const RuntimeClassHyperV = "windows-hyperv"

// ensureRuntimeClass creates the windows-hyperv RuntimeClass the flavors ship.
func (h *Harness) ensureRuntimeClass(ctx context.Context) error {
	return client.IgnoreAlreadyExists(h.WorkloadClient.Create(ctx, &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: RuntimeClassHyperV},
		Handler:    "runhcs-wcow-hypervisor",
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{corev1.LabelOSStable: "windows", HyperVIsolationLabel: "true"},
			Tolerations:  []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
		},
	}))
}

// DeployApp creates (or updates) the app in the workload cluster: nodeSelector
// kubernetes.io/os=windows and the toleration for os=windows:NoSchedule, as Windows workloads
// on a mixed cluster need.
func (h *Harness) DeployApp(ctx context.Context, app App) error {
	c := h.WorkloadClient
	if err := client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: AppNamespace}})); err != nil {
		return err
	}
	if app.HyperVIsolation {
		if err := h.ensureRuntimeClass(ctx); err != nil {
			return err
		}
	}
	labels := map[string]string{"app": app.Name}
	selector := map[string]string{corev1.LabelOSStable: "windows"}
	for k, v := range app.NodeSelector {
		selector[k] = v
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: AppNamespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, d, func() error {
		d.Spec.Replicas = ptr.To(app.Replicas)
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		d.Spec.Template.Labels = labels
		d.Spec.Template.Spec.NodeSelector = selector
		d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
		if app.HyperVIsolation {
			d.Spec.Template.Spec.RuntimeClassName = ptr.To(RuntimeClassHyperV)
		}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "iis", Image: app.Image, Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}
		return nil
	}); err != nil {
		return err
	}
	if app.MinAvailable == 0 {
		return nil
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: AppNamespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, c, pdb, func() error {
		pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(app.MinAvailable))
		pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		return nil
	})
	return err
}

// AppPods returns the app's Running+Ready pods that are not being deleted, by node.
func (h *Harness) AppPods(ctx context.Context, name string) (map[string]int, int, error) {
	pods := &corev1.PodList{}
	if err := h.WorkloadClient.List(ctx, pods, client.InNamespace(AppNamespace), client.MatchingLabels{"app": name}); err != nil {
		return nil, 0, err
	}
	byNode, n := map[string]int{}, 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() && p.Status.Phase == corev1.PodRunning && podReady(&p) {
			byNode[p.Spec.NodeName]++
			n++
		}
	}
	return byNode, n, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Availability records the fewest available pods of an app seen while it runs.
type Availability struct {
	mu     sync.Mutex
	min    int
	seen   bool
	cancel context.CancelFunc
	done   chan struct{}
}

// TrackAvailability samples the app's available pods every interval until Stop.
func (h *Harness) TrackAvailability(ctx context.Context, name string, interval time.Duration) *Availability {
	ctx, cancel := context.WithCancel(ctx)
	a := &Availability{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		poll(ctx, interval, func(ctx context.Context) {
			if _, n, err := h.AppPods(ctx, name); err == nil {
				a.mu.Lock()
				if !a.seen || n < a.min {
					a.min, a.seen = n, true
				}
				a.mu.Unlock()
			}
		})
	}()
	return a
}

// Stop ends the sampling and returns the minimum seen (-1 if nothing was sampled).
func (a *Availability) Stop() int {
	a.cancel()
	<-a.done
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.seen {
		return -1
	}
	return a.min
}
