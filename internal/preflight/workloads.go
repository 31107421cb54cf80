package preflight

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	osLabel    = "kubernetes.io/os"
	buildLabel = "node.kubernetes.io/windows-build"
	// hyperVHandler is the containerd runtime handler of Hyper-V isolation.
	hyperVHandler = "runhcs-wcow-hypervisor"
)

// Workload is one Pod template of the cluster.
type Workload struct {
	Kind      string                 `json:"kind"`
	Namespace string                 `json:"namespace"`
	Name      string                 `json:"name"`
	Template  corev1.PodTemplateSpec `json:"-"`
}

func (w Workload) String() string { return fmt.Sprintf("%s/%s %s", w.Namespace, w.Kind, w.Name) }

// Workloads lists the Pod templates of the Deployments, StatefulSets, DaemonSets, CronJobs and
// Jobs (those no CronJob owns) in namespace ("" = all) that run on Windows nodes.
func Workloads(ctx context.Context, c client.Reader, namespace string) ([]Workload, error) {
	var out []Workload
	add := func(kind, ns, name string, t corev1.PodTemplateSpec) {
		if IsWindows(&t.Spec) {
			out = append(out, Workload{Kind: kind, Namespace: ns, Name: name, Template: t})
		}
	}
	in := client.InNamespace(namespace)
	var deployments appsv1.DeploymentList
	if err := c.List(ctx, &deployments, in); err != nil {
		return nil, fmt.Errorf("list Deployments: %w", err)
	}
	for _, o := range deployments.Items {
		add("Deployment", o.Namespace, o.Name, o.Spec.Template)
	}
	var statefulSets appsv1.StatefulSetList
	if err := c.List(ctx, &statefulSets, in); err != nil {
		return nil, fmt.Errorf("list StatefulSets: %w", err)
	}
	for _, o := range statefulSets.Items {
		add("StatefulSet", o.Namespace, o.Name, o.Spec.Template)
	}
	var daemonSets appsv1.DaemonSetList
	if err := c.List(ctx, &daemonSets, in); err != nil {
		return nil, fmt.Errorf("list DaemonSets: %w", err)
	}
	for _, o := range daemonSets.Items {
		add("DaemonSet", o.Namespace, o.Name, o.Spec.Template)
	}
	var cronJobs batchv1.CronJobList
	if err := c.List(ctx, &cronJobs, in); err != nil {
		return nil, fmt.Errorf("list CronJobs: %w", err)
	}
	for _, o := range cronJobs.Items {
		add("CronJob", o.Namespace, o.Name, o.Spec.JobTemplate.Spec.Template)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, in); err != nil {
		return nil, fmt.Errorf("list Jobs: %w", err)
	}
	for _, o := range jobs.Items {
		if !slices.ContainsFunc(o.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "CronJob" }) {
			add("Job", o.Namespace, o.Name, o.Spec.Template)
		}
	}
	return out, nil
}

// IsWindows reports whether a Pod spec runs on Windows nodes: spec.os.name windows, a nodeSelector
// kubernetes.io/os=windows (or one on node.kubernetes.io/windows-build), or a required node
// affinity on either label that every term states.
func IsWindows(spec *corev1.PodSpec) bool {
	if spec.OS != nil {
		return spec.OS.Name == corev1.Windows
	}
	if os, ok := spec.NodeSelector[osLabel]; ok {
		return os == string(corev1.Windows)
	}
	if _, ok := spec.NodeSelector[buildLabel]; ok {
		return true
	}
	terms := requiredTerms(spec)
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		if !slices.ContainsFunc(t.MatchExpressions, func(e corev1.NodeSelectorRequirement) bool {
			return (e.Key == osLabel && e.Operator == corev1.NodeSelectorOpIn && slices.Equal(e.Values, []string{string(corev1.Windows)})) ||
				(e.Key == buildLabel && e.Operator == corev1.NodeSelectorOpIn)
		}) {
			return false
		}
	}
	return true
}

func requiredTerms(spec *corev1.PodSpec) []corev1.NodeSelectorTerm {
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
}

// pinnedBuilds returns the builds a Pod spec is pinned to with node.kubernetes.io/windows-build
// (nodeSelector, or In of the required node affinity's terms), nil when it is not pinned.
func pinnedBuilds(spec *corev1.PodSpec) []string {
	if b, ok := spec.NodeSelector[buildLabel]; ok {
		return []string{b}
	}
	var builds []string
	for _, t := range requiredTerms(spec) {
		pinned := false
		for _, e := range t.MatchExpressions {
			if e.Key == buildLabel && e.Operator == corev1.NodeSelectorOpIn {
				builds = append(builds, e.Values...)
				pinned = true
			}
		}
		if !pinned {
			return nil // this term lets the Pod onto any build
		}
	}
	return builds
}

// HyperVClasses returns the names of the RuntimeClasses whose handler is Hyper-V isolation
// (runhcs-wcow-hypervisor; the templates ship windows-hyperv).
func HyperVClasses(ctx context.Context, c client.Reader) (map[string]bool, error) {
	var list nodev1.RuntimeClassList
	if err := c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list RuntimeClasses: %w", err)
	}
	out := map[string]bool{}
	for _, rc := range list.Items {
		if rc.Handler == hyperVHandler {
			out[rc.Name] = true
		}
	}
	return out, nil
}

// isClass reports whether the RuntimeClass exists (a failed read counts as existing: the check
// makes no claim it cannot back).
func isClass(ctx context.Context, c client.Reader, name string) bool {
	return !apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: name}, &nodev1.RuntimeClass{}))
}
