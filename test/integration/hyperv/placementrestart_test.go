package hyperv_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/transport"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// TestPlacementAcrossRestarts: three machines of one MachineDeployment on three hosts, each placed
// by a manager that restarts between its choice (the host copies its parent disk source) and its
// create. Each machine's choice counts for the next one's after the restart, so each lands on a
// host of its own, keeps the host its copy runs on, and each host copies once. The hosts are this
// test's own, with different free memory, so that a placement that forgot the earlier choices
// would put every machine on the same host. A machine is paused from its choice on, so the
// restarted manager places the next machine before it looks at this one again.
func TestPlacementAcrossRestarts(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	const filter = "hyperv-restart"
	hs := ownHosts(t, "pr1", "pr2", "pr3")
	stop := startOwnManager(t, filter)
	defer func() { stop() }()
	f := newClusterOn(t, filter, hs, nil)
	f.provisioned(t)

	img := imageServer(t, []byte("golden image "+randSuffix()))
	for _, h := range hs {
		h.SetHTTPClient(img.client)
		h.HoldCopies(true)
		t.Cleanup(func() { h.HoldCopies(false) })
	}
	spec := defaultSpec()
	spec.ParentDisk = ""
	spec.ParentDiskSource = &infrav1.HyperVParentDiskSource{URL: img.url, SHA256: img.sha}

	var machines []*machine
	copyHost := map[string]string{} // machine name -> the host its parent disk copy was asked of
	for i := range 3 {
		before := parentOps(hs)
		mc := f.addMachine(t, "win-md-restart-"+randSuffix(), "md-restart", userData, spec)
		machines = append(machines, mc)
		var asked string
		g.Eventually(func() string { asked = changed(before, parentOps(hs)); return asked }, 30*time.Second, 20*time.Millisecond).
			ShouldNot(BeEmpty(), "machine %d asks a host for its parent disk", i+1)
		for name, h := range copyHost {
			g.Expect(asked).NotTo(Equal(h), "machine %d is placed on the host of %s, chosen before the restart", i+1, name)
		}
		copyHost[mc.hvm.Name] = asked
		setPaused(g, mc, true)
		// Once the manager reports the pause, no reconcile of this machine is under way that could
		// still ask a host after the restart (and be taken for the next machine's).
		g.Eventually(func(g Gomega) {
			g.Expect(condition(mc.get(g).Status.Conditions, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
		}, 30*time.Second, 20*time.Millisecond).Should(Succeed())
		stop()
		stop = startOwnManager(t, filter)
	}
	for _, mc := range machines {
		setPaused(g, mc, false)
	}
	for _, h := range hs {
		h.HoldCopies(false)
	}
	perHost := map[string]int{}
	for _, mc := range machines {
		m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
		g.Expect(m.Status.VM.Host).To(Equal(copyHost[m.Name]), "a machine keeps the host its copy runs on")
		perHost[m.Status.VM.Host]++
	}
	g.Expect(perHost).To(Equal(map[string]int{"pr1": 1, "pr2": 1, "pr3": 1}))
	for _, h := range hs {
		g.Expect(h.ParentCopies(img.sha)).To(Equal(1), "host %s copies the parent disk once", h.Name)
		g.Expect(h.Ops()["create"]).To(Equal(1), "host %s creates one VM", h.Name)
	}
}

// ownHosts are simulated hosts of one test, each with 8 GiB less free memory than the one before.
func ownHosts(t *testing.T, names ...string) []simHost {
	t.Helper()
	var out []simHost
	for i, name := range names {
		h := hypervsim.NewHost(name, 131072-int64(i)*8192, []string{vswitch}, map[string]int64{parentDisk: 30 << 30})
		srv, err := h.Serve(map[string]string{hostUser: hostPassword})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		out = append(out, simHost{Host: h, srv: srv})
	}
	return out
}

// startOwnManager starts a manager process of its own, as in production, for the objects labelled
// filter; the function it returns stops it (a restart is a stop and a new start).
func startOwnManager(t *testing.T, filter string) func() {
	t.Helper()
	opts := options(filter, &hyperv.Conns{Timeout: conns.Timeout, Deadlines: conns.Deadlines, GuestWatch: conns.GuestWatch})
	same := transport.WrapperFunc(func(rt http.RoundTripper) http.RoundTripper { return rt })
	_, cancel, err := env.StartCountedManager(setup.Scheme(), same, func(ctx context.Context, mgr ctrl.Manager) error {
		return setup.Reconcilers(ctx, mgr, opts)
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			cancel()
		}
	}
}

// parentOps counts each host's parent disk operations.
func parentOps(hs []simHost) map[string]int {
	out := map[string]int{}
	for _, h := range hs {
		out[h.Name] = h.Ops()["parent"]
	}
	return out
}

// changed names the host whose count grew ("" when none did).
func changed(before, now map[string]int) string {
	var out []string
	for h, n := range now {
		if n > before[h] {
			out = append(out, h)
		}
	}
	return strings.Join(out, ",")
}

// setPaused sets or removes Cluster API's paused annotation of the machine's HyperVMachine.
func setPaused(g Gomega, mc *machine, paused bool) {
	m := mc.get(g)
	base := m.DeepCopy()
	if paused {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[clusterv1.PausedAnnotation] = "true"
	} else {
		delete(m.Annotations, clusterv1.PausedAnnotation)
	}
	g.Expect(k8s.Patch(ctx, m, client.MergeFrom(base))).To(Succeed())
}
