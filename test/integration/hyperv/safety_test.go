package hyperv_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestRefusedHostCredentials: once the hosts' Secret holds a wrong password, each host sees one
// refused login for that version of the Secret, however many machines and reconciles ask; the
// machines and the cluster name the Secret; fixing the Secret lets them go on.
func TestRefusedHostCredentials(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	var machines []*machine
	for range 4 {
		mc := f.addMachine(t, "win-auth-"+randSuffix(), "", userData, defaultSpec())
		mc.waitReason(t, infrav1.WaitingForAddressesReason)
		machines = append(machines, mc)
	}
	before := authFailures()
	secret := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "hosts"}, secret)).To(Succeed())
	secret.Data["password"] = []byte("not-the-password")
	g.Expect(k8s.Update(ctx, secret)).To(Succeed())

	g.Eventually(func(g Gomega) {
		for _, mc := range machines {
			c := condition(mc.get(g).Status.Conditions, infrav1.VMProvisionedCondition)
			g.Expect(c.Reason).To(Equal(infrav1.AuthenticationFailedReason), "refused logins %v", delta(before, authFailures()))
			g.Expect(c.Message).To(ContainSubstring(f.ns + "/hosts"))
			g.Expect(c.Message).To(ContainSubstring("update the Secret to retry"))
		}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.hc), f.hc)).To(Succeed())
		g.Expect(condition(f.hc.Status.Conditions, infrav1.HypervisorAvailableCondition).Reason).To(Equal(infrav1.AuthenticationFailedReason))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	// Machines poll every 300ms, re-read the Secret every 200ms, hosts are probed every 500ms.
	time.Sleep(2 * time.Second)
	g.Expect(delta(before, authFailures())).To(HaveEach(BeNumerically("<=", 1)))

	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	secret.Data["password"] = []byte(hostPassword)
	g.Expect(k8s.Update(ctx, secret)).To(Succeed())
	for _, mc := range machines {
		mc.waitReason(t, infrav1.WaitingForAddressesReason)
	}
}

// authFailures are the refused logins of each host.
func authFailures() []int64 {
	var out []int64
	for _, h := range hosts {
		out = append(out, h.srv.Stats().AuthFailures)
	}
	return out
}

func delta(before, after []int64) []int64 {
	out := make([]int64, len(after))
	for i := range after {
		out[i] = after[i] - before[i]
	}
	return out
}

// TestHungHostDoesNotStallOthers: a host whose operations never end holds no more than their
// deadline; machines on another host are created meanwhile, and the hung host's machines say
// it did not answer.
func TestHungHostDoesNotStallOthers(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	host("hv1").Hang(true)
	t.Cleanup(func() { host("hv1").Hang(false) })
	pinned := func(h string) infrav1.HyperVMachineSpec {
		spec := defaultSpec()
		spec.Host = h
		return spec
	}
	var stuck []*machine
	for range 6 { // more than the 4 workers
		stuck = append(stuck, f.addMachine(t, "win-hung-"+randSuffix(), "", userData, pinned("hv1")))
	}
	start := time.Now()
	f.addMachine(t, "win-ok-"+randSuffix(), "", userData, pinned("hv2")).waitReason(t, infrav1.WaitingForAddressesReason)
	t.Logf("machine on hv2 waiting for addresses after %s", time.Since(start))
	g.Eventually(func(g Gomega) {
		c := condition(stuck[0].get(g).Status.Conditions, infrav1.VMProvisionedCondition)
		g.Expect(c.Reason).To(Equal(infrav1.HypervisorErrorReason))
		g.Expect(c.Message).To(ContainSubstring("no answer within"))
	}, 3*conns.Deadlines.Long, 100*time.Millisecond).Should(Succeed())
}

// TestForgetVM: a machine whose host is dead cannot be deleted; the forget-vm annotation drops
// its finalizer without the host and a warning event names the VM left behind.
func TestForgetVM(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv3"
	mc := f.addMachine(t, "win-dead-"+randSuffix(), "", userData, spec)
	vmID := mc.waitReason(t, infrav1.WaitingForAddressesReason).Status.VM.ID
	hosts[2].srv.SetDown(true)
	t.Cleanup(func() { hosts[2].srv.SetDown(false) })

	g.Expect(k8s.Delete(ctx, mc.hvm)).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(mc.get(g).Finalizers).NotTo(BeEmpty())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	hvm := mc.get(g)
	patch := client.MergeFrom(hvm.DeepCopy())
	hvm.Annotations = map[string]string{infrav1.ForgetVMAnnotation: ""}
	g.Expect(k8s.Patch(ctx, hvm, patch)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(hvm), &infrav1.HyperVMachine{}))
	}, 10*time.Second, 100*time.Millisecond).Should(BeTrue())
	g.Eventually(func(g Gomega) {
		events := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, events, client.InNamespace(f.ns))).To(Succeed())
		var notes []string
		for _, e := range events.Items {
			if e.Reason == "VMForgotten" && e.Type == corev1.EventTypeWarning && e.Regarding.Name == hvm.Name {
				notes = append(notes, e.Note)
			}
		}
		g.Expect(strings.Join(notes, "\n")).To(And(ContainSubstring(vmID), ContainSubstring("hv3")))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	_, left := vmOf(host("hv3"), string(hvm.UID))
	g.Expect(left).To(BeTrue(), "the VM is left on the host")
}
