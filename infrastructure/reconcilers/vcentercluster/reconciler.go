// Package vcentercluster reconciles VCenterClusters: it checks that vCenter accepts the
// identity and has the datacenter and failure domains, and reports them to CAPI.
package vcentercluster

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/credentials"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter"
	"github.com/capwin/capwin/infrastructure/reconcilers/clusterbase"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/admit"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcenterclusters,verbs=list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcenterclusters/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;patch

// recheck is how often a healthy VCenterCluster is checked again (vCenter reachable, credentials
// still valid), so the condition tells the truth without an object change.
const recheck = 5 * time.Minute

// Reconciler reconciles VCenterClusters.
type Reconciler struct {
	Client           client.Client
	Provider         *vcenter.Provider
	WatchFilterValue string
	// Recorder gets the events of refused objects; SetupWithManager sets the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("vcentercluster-controller")
	}
	users := clusterbase.IdentityUsers(mgr.GetClient(), &infrav1.VCenterClusterList{}, r.WatchFilterValue, func(o client.Object, identity string) bool {
		ref := o.(*infrav1.VCenterCluster).Spec.IdentityRef
		return ref.Kind == infrav1.VCenterClusterIdentityKind && ref.Name == identity
	})
	return clusterbase.Setup(ctx, mgr, "vcentercluster", &infrav1.VCenterCluster{}, r.WatchFilterValue, options, r,
		&infrav1.VCenterClusterIdentity{}, users)
}

// Reconcile checks vCenter and reports the cluster's infrastructure as provisioned.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	vc := &infrav1.VCenterCluster{}
	return clusterbase.Reconcile(ctx, r.Client, req.NamespacedName, vc, r.WatchFilterValue, clusterbase.Admission{
		Check: admit.Webhook[*infrav1.VCenterCluster](nil, &webhooks.VCenterCluster{}), Recorder: r.Recorder,
	}, func(ctx context.Context) (ctrl.Result, error) {
		return r.check(ctx, vc)
	}, r.Provider.Release)
}

func (r *Reconciler) check(ctx context.Context, vc *infrav1.VCenterCluster) (ctrl.Result, error) {
	if ref := vc.Spec.IdentityRef; ref.IsSecret() { // an identity owns its own Secret
		if err := credentials.Own(ctx, r.Client, vc, client.ObjectKey{Namespace: vc.Namespace, Name: ref.Name}); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.Provider.CheckCluster(ctx, vc); err != nil {
		conditions.Set(vc, metav1.Condition{Type: infrav1.HypervisorAvailableCondition, Status: metav1.ConditionFalse,
			Reason: vcenter.Reason(err), Message: err.Error()})
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	conditions.Set(vc, metav1.Condition{Type: infrav1.HypervisorAvailableCondition, Status: metav1.ConditionTrue, Reason: infrav1.HypervisorAvailableReason})
	vc.Status.FailureDomains = nil
	for _, fd := range vc.Spec.FailureDomains {
		vc.Status.FailureDomains = append(vc.Status.FailureDomains, clusterv1.FailureDomain{Name: fd.Name, ControlPlane: fd.ControlPlane})
	}
	vc.Status.Initialization.Provisioned = ptr.To(true)
	return ctrl.Result{RequeueAfter: recheck}, nil
}
