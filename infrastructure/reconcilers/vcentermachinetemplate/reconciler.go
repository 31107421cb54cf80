// Package vcentermachinetemplate publishes what a node of a VCenterMachineTemplate offers
// (status.capacity, status.nodeInfo), so the cluster autoscaler can scale a Windows
// MachineDeployment from zero.
package vcentermachinetemplate

import (
	"context"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter"
	"github.com/capwin/capwin/infrastructure/reconcilers/machinetemplate"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/admit"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcentermachinetemplates,verbs=list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcentermachinetemplates/status,verbs=patch

// Reconciler fills VCenterMachineTemplate status.
type Reconciler struct {
	Client           client.Client
	Provider         *vcenter.Provider
	WatchFilterValue string
	// Recorder gets the events of refused templates; SetupWithManager sets the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("vcentermachinetemplate-controller")
	}
	return machinetemplate.Setup(ctx, mgr, "vcentermachinetemplate", &infrav1.VCenterMachineTemplate{}, r.WatchFilterValue, options, r)
}

// Reconcile sets capacity from the spec, or from the vCenter template when the spec keeps the
// template's sizes and the object names its cluster (label cluster.x-k8s.io/cluster-name).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &infrav1.VCenterMachineTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec := &t.Spec.Template.Spec
	cpus, mem := spec.NumCPUs, spec.MemoryMiB
	var result ctrl.Result
	if cpus == 0 || mem == 0 {
		tc, tm, err := r.fromVCenter(ctx, t)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("Cannot read the template's hardware from vCenter; capacity stays partial", "error", err.Error())
			result.RequeueAfter = 5 * time.Minute
		}
		cpus, mem = max(cpus, tc), max(mem, tm)
	}
	res, err := machinetemplate.Publish(ctx, r.Client, r.Recorder, admitTemplate, t, &t.Status, machinetemplate.Status(spec.OS, cpus, mem))
	if res.RequeueAfter > 0 && (result.RequeueAfter == 0 || res.RequeueAfter < result.RequeueAfter) {
		result = res
	}
	return result, err
}

// admitTemplate is the VCenterMachineTemplate webhook's create path.
var admitTemplate = admit.Webhook[*infrav1.VCenterMachineTemplate](&webhooks.VCenterMachineTemplate{}, &webhooks.VCenterMachineTemplate{})

func (r *Reconciler) fromVCenter(ctx context.Context, t *infrav1.VCenterMachineTemplate) (int32, int64, error) {
	clusterName := t.Labels[clusterv1.ClusterNameLabel]
	if clusterName == "" || r.Provider == nil {
		return 0, 0, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: clusterName}, cluster); err != nil {
		return 0, 0, client.IgnoreNotFound(err)
	}
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind != "VCenterCluster" {
		return 0, 0, nil
	}
	vc := &infrav1.VCenterCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: ref.Name}, vc); err != nil {
		return 0, 0, client.IgnoreNotFound(err)
	}
	return r.Provider.TemplateHardware(ctx, vc, &t.Spec.Template.Spec)
}
