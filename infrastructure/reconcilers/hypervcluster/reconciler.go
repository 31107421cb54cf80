// Package hypervcluster reconciles HyperVClusters: it probes every Hyper-V host (WinRM login,
// capacity, virtual switch, folders), reports each host's availability for placement, and reports
// the failure domains and the provisioned infrastructure to CAPI.
package hypervcluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/reconcilers/clusterbase"
	"github.com/capwin/capwin/infrastructure/webhooks"
	"github.com/capwin/capwin/internal/admit"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=hypervclusters,verbs=list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=hypervclusters/status,verbs=patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=hypervmachines,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;patch

// Reconciler reconciles HyperVClusters.
type Reconciler struct {
	Client           client.Client
	Provider         *hyperv.Provider
	WatchFilterValue string
	// Recorder gets the events of refused objects; SetupWithManager sets the manager's.
	Recorder events.EventRecorder
	// Recheck is how often the hosts are probed again (default 1m): placement reads the result.
	Recheck time.Duration
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("hypervcluster-controller")
	}
	users := clusterbase.IdentityUsers(mgr.GetClient(), &infrav1.HyperVClusterList{}, r.WatchFilterValue, func(o client.Object, identity string) bool {
		ref := o.(*infrav1.HyperVCluster).Spec.CredentialsRef
		return ref.Kind == infrav1.HyperVClusterIdentityKind && ref.Name == identity
	})
	return clusterbase.Setup(ctx, mgr, "hypervcluster", &infrav1.HyperVCluster{}, r.WatchFilterValue, options, r,
		&infrav1.HyperVClusterIdentity{}, users)
}

// Reconcile probes the hosts and reports the cluster's infrastructure.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hc := &infrav1.HyperVCluster{}
	return clusterbase.Reconcile(ctx, r.Client, req.NamespacedName, hc, r.WatchFilterValue, clusterbase.Admission{
		Check: admit.Webhook[*infrav1.HyperVCluster](nil, &webhooks.HyperVCluster{}), Recorder: r.Recorder,
	}, func(ctx context.Context) (ctrl.Result, error) {
		return r.check(ctx, hc)
	}, r.Provider.Release)
}

func (r *Reconciler) check(ctx context.Context, hc *infrav1.HyperVCluster) (ctrl.Result, error) {
	for _, h := range hc.Spec.Hosts {
		if ref := hc.Spec.HostCredentials(h); ref.IsSecret() { // an identity owns its own Secret
			if err := credentials.Own(ctx, r.Client, hc, client.ObjectKey{Namespace: hc.Namespace, Name: ref.Name}); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	vms, err := r.vmsPerHost(ctx, hc)
	if err != nil {
		return ctrl.Result{}, err
	}
	checks := r.Provider.CheckHosts(ctx, hc)
	hc.Status.Hosts = nil
	var down []string
	var firstErr error
	for _, c := range checks {
		st := infrav1.HyperVHostStatus{Name: c.Name, Available: c.Err == nil, FreeMemoryMiB: c.Info.FreeMemoryMiB, VMs: vms[c.Name]}
		if c.Err == nil {
			st.GPU = hyperv.GPUStatus(c.Info)
		}
		if c.Err != nil {
			st.Message = c.Err.Error()
			down = append(down, c.Name)
			if firstErr == nil {
				firstErr = c.Err
			}
		}
		hc.Status.Hosts = append(hc.Status.Hosts, st)
	}
	recheck := r.Recheck
	if recheck == 0 {
		recheck = time.Minute
	}
	if len(down) == len(checks) {
		conditions.Set(hc, metav1.Condition{Type: infrav1.HypervisorAvailableCondition, Status: metav1.ConditionFalse,
			Reason: reason(firstErr), Message: "no host can be used: " + firstErr.Error()})
		return ctrl.Result{RequeueAfter: recheck}, nil
	}
	msg := ""
	if len(down) > 0 {
		msg = fmt.Sprintf("hosts not available for new machines: %s (see status.hosts)", strings.Join(down, ", "))
	}
	conditions.Set(hc, metav1.Condition{Type: infrav1.HypervisorAvailableCondition, Status: metav1.ConditionTrue,
		Reason: infrav1.HypervisorAvailableReason, Message: msg})
	hc.Status.FailureDomains = nil
	for _, fd := range hc.Spec.FailureDomains {
		hc.Status.FailureDomains = append(hc.Status.FailureDomains, clusterv1.FailureDomain{Name: fd.Name, ControlPlane: ptr.To(fd.ControlPlane)})
	}
	hc.Status.Initialization.Provisioned = ptr.To(true)
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// vmsPerHost counts the cluster's HyperVMachines on each host.
func (r *Reconciler) vmsPerHost(ctx context.Context, hc *infrav1.HyperVCluster) (map[string]int32, error) {
	list := &infrav1.HyperVMachineList{}
	name := hc.Labels[clusterv1.ClusterNameLabel]
	if err := r.Client.List(ctx, list, client.InNamespace(hc.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: name},
		client.UnsafeDisableDeepCopy); err != nil { // read only
		return nil, err
	}
	out := map[string]int32{}
	for _, m := range list.Items {
		if m.Status.VM.Host != "" {
			out[m.Status.VM.Host]++
		}
	}
	return out, nil
}

// reason maps a host error to a HypervisorAvailable reason.
func reason(err error) string {
	var terminal *hypervisor.Error
	if errors.As(err, &terminal) { // the credentials may not be used (CredentialsInUse ...)
		return terminal.Reason
	}
	switch hyperv.KindOf(err) {
	case wire.KindCredentials:
		return infrav1.CredentialsNotFoundReason
	case wire.KindTLS:
		return infrav1.TLSVerificationFailedReason
	case wire.KindAuth:
		return infrav1.AuthenticationFailedReason
	case wire.KindInvalidSpec:
		return infrav1.PlacementNotFoundReason
	}
	return infrav1.LoginFailedReason
}
