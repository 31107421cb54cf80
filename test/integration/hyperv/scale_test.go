package hyperv_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	machines "github.com/capwin/capwin/infrastructure/reconcilers/machine"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/test/framework/apicount"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// TestSteadyStateRequests counts the management-cluster requests of reconciles of provisioned
// HyperVMachines waiting for their Node (on a cluster of three hosts, each with its own
// credentialsRef), through a second reconciler wired as in production: a reconcile must cost the
// same for 2 and for 8 machines, and read no Secret from the API server.
func TestSteadyStateRequests(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	counter := &apicount.Counter{}
	o := setup.Options{ClusterCache: manager.ClusterCacheOptions{Concurrency: 2, QPS: 50, Burst: 100}, Conns: conns, IdentityNamespace: identityNamespace}
	var r *machines.Reconciler
	_, cancel, err := env.StartCountedManager(setup.Scheme(), counter.Wrap, func(ctx context.Context, mgr ctrl.Manager) error {
		cc, _, err := manager.ClusterCache(ctx, mgr, setup.ControllerName, watchFilter, o.ClusterCache)
		if err != nil {
			return err
		}
		secrets, err := setup.LoginSecrets(mgr, o)
		if err != nil {
			return err
		}
		provider, err := setup.HyperVProvider(ctx, mgr, secrets, o)
		if err != nil {
			return err
		}
		r = setup.NewHyperVMachineReconciler(mgr.GetClient(), mgr.GetAPIReader(), cc, provider, o)
		r.Recorder = mgr.GetEventRecorder("hypervmachine-controller")
		return nil
	})
	g.Expect(err).NotTo(HaveOccurred())
	defer cancel()
	r.Default()

	g.Expect(counter.Steady([]int{2, 8}, 3, func(n int) func() {
		keys := provisionedMachines(t, n)
		return func() { reconcileAll(g, r, keys) }
	}, t.Logf)).To(BeEmpty())
}

// provisionedMachines creates a cluster whose hosts each name a Secret of their own and n
// machines, and waits (the suite's manager at work) until each is provisioned and waits for its
// Node; the guests report an address once their VM runs.
func provisionedMachines(t *testing.T, n int) []client.ObjectKey {
	t.Helper()
	g := NewWithT(t)
	f := newCluster(t, func(s *infrav1.HyperVClusterSpec) {
		for i := range s.Hosts {
			s.Hosts[i].CredentialsRef.Name = "host-" + s.Hosts[i].Name
		}
	})
	for _, h := range hosts {
		f.addSecret(t, "host-"+h.Name, hostPassword)
	}
	f.provisioned(t)
	var added []*machine
	for i := range n {
		added = append(added, f.addMachine(t, fmt.Sprintf("win-md-0-%d-%s", i, randSuffix()), "md-0", userData, defaultSpec()))
	}
	var keys []client.ObjectKey
	for i, mc := range added {
		m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
		h := host(m.Status.VM.Host)
		vm, ok := vmOf(h, string(m.UID))
		g.Expect(ok).To(BeTrue())
		g.Expect(h.Guest(vm.ID, func(v *hypervsim.VM) {
			v.Heartbeat = true
			v.NICs[0].IPs = []string{fmt.Sprintf("10.3.0.%d", i+10)}
		})).To(Succeed())
		keys = append(keys, client.ObjectKeyFromObject(mc.hvm))
	}
	for _, mc := range added {
		mc.waitReason(t, infrav1.ProvisionedReason)
	}
	return keys
}

// reconcileAll reconciles each machine once.
func reconcileAll(g Gomega, r *machines.Reconciler, keys []client.ObjectKey) {
	for _, k := range keys {
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: k})
		g.Expect(err).NotTo(HaveOccurred())
	}
}
