// Package machinetemplate publishes what a node of a machine template offers (status.capacity,
// status.nodeInfo), so the cluster autoscaler can scale a Windows MachineDeployment from zero.
// HyperVMachineTemplates are handled here; VCenterMachineTemplates, which may read the sizes
// from vCenter, in package vcentermachinetemplate.
package machinetemplate

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"sigs.k8s.io/cluster-api/util/conditions"
	capicontrollerutil "sigs.k8s.io/cluster-api/util/controller"
	"sigs.k8s.io/cluster-api/util/predicates"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/admit"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=hypervmachinetemplates,verbs=list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=hypervmachinetemplates/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Status is what a node of the template offers; unknown sizes are left out.
func Status(os infrav1.OperatingSystem, cpus int32, memoryMiB int64) infrav1.MachineTemplateStatus {
	st := infrav1.MachineTemplateStatus{NodeInfo: infrav1.NodeInfo{OperatingSystem: "windows"}}
	if os == infrav1.OSLinux {
		st.NodeInfo.OperatingSystem = "linux"
	}
	if cpus > 0 || memoryMiB > 0 {
		st.Capacity = corev1.ResourceList{}
	}
	if cpus > 0 {
		st.Capacity[corev1.ResourceCPU] = *resource.NewQuantity(int64(cpus), resource.DecimalSI)
	}
	if memoryMiB > 0 {
		st.Capacity[corev1.ResourceMemory] = *resource.NewQuantity(memoryMiB*1024*1024, resource.BinarySI)
	}
	return st
}

// HyperVReconciler fills HyperVMachineTemplate status from the spec (processors, startup memory).
type HyperVReconciler struct {
	Client           client.Client
	WatchFilterValue string
	// Recorder gets the events of refused templates; SetupWithManager sets the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller.
func (r *HyperVReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("hypervmachinetemplate-controller")
	}
	return Setup(ctx, mgr, "hypervmachinetemplate", &infrav1.HyperVMachineTemplate{}, r.WatchFilterValue, options, r)
}

// Setup registers a machine template reconciler, filtered by the watch label.
func Setup(ctx context.Context, mgr ctrl.Manager, name string, obj client.Object, watchFilter string, options controller.Options, r reconcile.Reconciler) error {
	log := ctrl.LoggerFrom(ctx).WithValues("controller", name)
	return capicontrollerutil.NewControllerManagedBy(mgr, log).
		For(obj).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, watchFilter)).
		Complete(ctx, r)
}

// Reconcile publishes the template's capacity.
func (r *HyperVReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &infrav1.HyperVMachineTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec := &t.Spec.Template.Spec
	return Publish(ctx, r.Client, r.Recorder, admitHyperV, t, &t.Status, Status(spec.OS, spec.Processors, spec.MemoryMiB))
}

// admitHyperV is the HyperVMachineTemplate webhook's create path.
var admitHyperV = admit.Webhook[*infrav1.HyperVMachineTemplate](&webhooks.HyperVMachineTemplate{}, &webhooks.HyperVMachineTemplate{})

// Template is a machine template of either kind.
type Template interface {
	client.Object
	conditions.Setter
}

// Publish sets t's status (status points at it) to want and, while check (the template's
// admission webhook) would reject t, condition Ready False with reason InvalidSpec and an event;
// it patches the status when that changed. Machines made from a refused template are refused
// by the machine reconciler in turn.
func Publish(ctx context.Context, c client.Client, rec events.EventRecorder, check admit.Check, t Template,
	status *infrav1.MachineTemplateStatus, want infrav1.MachineTemplateStatus) (ctrl.Result, error) {
	before := t.DeepCopyObject().(client.Object)
	want.Conditions = status.Conditions
	*status = want
	var res ctrl.Result
	if err := check(ctx, t.DeepCopyObject()); err != nil {
		admit.Refuse(t, infrav1.ReadyCondition, err, rec)
		res.RequeueAfter = admit.Recheck
	} else {
		conditions.Delete(t, infrav1.ReadyCondition)
	}
	if equality.Semantic.DeepEqual(before, t) {
		return res, nil
	}
	return res, c.Status().Patch(ctx, t, client.MergeFrom(before))
}
