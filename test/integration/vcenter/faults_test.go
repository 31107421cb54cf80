package vcenter_test

import (
	"crypto/rand"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/object"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestFaultsRecover fails vSphere calls on purpose: the failure shows on VMProvisioned with the
// cause, and the machine recovers with one VM once vCenter answers again.
func TestFaultsRecover(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	faults.fail("CloneVM_Task", 3)
	defer faults.fail("CloneVM_Task", 0)
	f.addMachine(t, "win-md-0-faults-"+randSuffix(), userData, defaultSpec())
	c := vc(g)

	g.Eventually(func(g Gomega) {
		cond := condition(f.get(g).Status.Conditions, infrav1.VMProvisionedCondition)
		g.Expect(cond.Reason).To(Equal(infrav1.HypervisorErrorReason))
		g.Expect(cond.Message).To(ContainSubstring("injected fault"))
	}, 20*time.Second, 20*time.Millisecond).Should(Succeed())
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))

	// Reads failing while the VM waits for addresses: shown, then recovered.
	faults.fail("RetrievePropertiesEx", 2)
	faults.fail("RetrieveProperties", 2)
	guestSets(g, c, vmRef(m.Status.VM.ID), map[string]string{"SET.guest.ipAddress": "10.0.0.31"})
	f.waitReason(t, infrav1.ProvisionedReason)
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
}

// TestBootstrapDataTooLarge: user data over vSphere's 64 KiB guestinfo limit gives a clear
// condition and no VM (never a VM with truncated data).
func TestBootstrapDataTooLarge(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	big := make([]byte, 70*1024) // random bytes do not compress
	_, _ = rand.Read(big)
	f.addMachine(t, "win-md-0-toolarge-"+randSuffix(), big, defaultSpec())
	m := f.waitReason(t, infrav1.BootstrapDataTooLargeReason)
	g.Expect(condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Message).To(ContainSubstring("65536"))
	g.Consistently(func(g Gomega) {
		g.Expect(vmsWithUUID(g, vc(g), string(m.UID))).To(BeEmpty())
		g.Expect(f.get(g).Status.Task).To(BeEmpty())
	}, time.Second, 200*time.Millisecond).Should(Succeed())
}

// TestInvalidSpec: a disk smaller than the template's and a missing template are refused with
// the field named, without a VM.
func TestInvalidSpec(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mutate func(*infrav1.VCenterMachineSpec)
		msg    string
	}{
		"disk smaller than template":  {func(s *infrav1.VCenterMachineSpec) { s.DiskGiB = 5 }, "spec.diskGiB: 5 GiB is smaller than the template's disk (10.0 GiB)"},
		"template missing":            {func(s *infrav1.VCenterMachineSpec) { s.Template = "no-such-template" }, `template "no-such-template" not found`},
		"network missing":             {func(s *infrav1.VCenterMachineSpec) { s.Network[0].NetworkName = "no-such-net" }, `network "no-such-net" not found`},
		"guest ops with cloud-config": {func(s *infrav1.VCenterMachineSpec) { s.GuestCredentialsRef = &infrav1.SecretReference{Name: "admin"} }, `format "cloud-config", but spec.guestCredentialsRef`},
		"content library missing":     {func(s *infrav1.VCenterMachineSpec) { s.ContentLibrary = "no-such-library" }, `spec.contentLibrary: library "no-such-library" not found`},
		"storage policy missing":      {func(s *infrav1.VCenterMachineSpec) { s.StoragePolicy = "gold" }, `storagePolicy "gold" not found`},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			f := newCluster(t, watchFilter)
			spec := defaultSpec()
			tc.mutate(&spec)
			f.addMachine(t, "win-md-0-invalid-"+randSuffix(), userData, spec)
			m := f.waitReason(t, infrav1.InvalidSpecReason)
			cond := condition(m.Status.Conditions, infrav1.VMProvisionedCondition)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Message).To(ContainSubstring(tc.msg))
			g.Expect(vmsWithUUID(g, vc(g), string(m.UID))).To(BeEmpty())
		})
	}
}

// TestPowerShellFormat: the powershell format is one #ps1_sysnative script; it travels in
// guestinfo.userdata like cloud-config, and cloudbase-init runs it.
func TestPowerShellFormat(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	f.format = "powershell"
	script := []byte("#ps1_sysnative\r\n$ErrorActionPreference = 'Stop'\r\n")
	f.addMachine(t, "win-md-0-ps1-"+randSuffix(), script, defaultSpec())
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	vms := vmsWithUUID(g, vc(g), string(m.UID))
	g.Expect(vms).To(HaveLen(1))
	g.Expect(gunzipBase64(g, extraConfig(vms[0])["guestinfo.userdata"])).To(Equal(script))
}

// TestFailedCloneBacksOff: a clone task that fails (a VM of the machine's name is in the folder)
// is sent again after pauses that double, not at every poll; once the name is free the machine
// is created and the failure count is reset.
func TestFailedCloneBacksOff(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	c := vc(g)
	name := "win-md-0-backoff-" + randSuffix()
	squatter := foreignVM(g, c, name, "")
	f := newCluster(t, watchFilter)
	f.addMachine(t, name, userData, defaultSpec())

	// Backoff after the n-th failure: 300ms (the test's poll interval) doubled n-1 times.
	g.Eventually(func() int { return len(faults.clones(name)) }, 40*time.Second, 50*time.Millisecond).Should(BeNumerically(">=", 6))
	sent := faults.clones(name)
	var gaps []time.Duration
	for i := 1; i < len(sent); i++ {
		gaps = append(gaps, sent[i].Sub(sent[i-1]))
	}
	t.Logf("pauses between clone requests: %v", gaps)
	// The pause after the fifth failure is 4.5s longer than after the first (4.8s, 0.3s), less up
	// to 1s because status.provisioning.since has whole seconds.
	g.Expect(gaps[4]-gaps[0]).To(BeNumerically(">=", 2*time.Second), "pauses grow: %v", gaps)
	g.Eventually(func(g Gomega) {
		m := f.get(g)
		cond := condition(m.Status.Conditions, infrav1.VMProvisionedCondition)
		g.Expect(cond.Reason).To(Equal(infrav1.TaskFailedReason))
		g.Expect(cond.Message).To(ContainSubstring("DuplicateName"))
		g.Expect(cond.Message).To(ContainSubstring("failed creates in a row"))
		g.Expect(m.Status.Provisioning.Failures).To(BeNumerically(">=", 5))
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	task, err := object.NewVirtualMachine(c, squatter.Self).Destroy(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(task.Wait(ctx)).To(Succeed())
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.Provisioning.Failures).To(BeZero())
	g.Expect(vmsWithUUID(g, c, string(m.UID))).To(HaveLen(1))
}

// TestCloneBackoffSurvivesRestart: the pause after failed clones is counted from status, so a
// manager that starts in the middle of it (here: a new reconciler) waits it out too.
func TestCloneBackoffSurvivesRestart(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, "backoffrestart")
	name := "win-md-0-backoffrestart-" + randSuffix()
	f.addMachine(t, name, userData, defaultSpec())
	// The status a manager left behind after five failed clones (the reconcile that adds the
	// finalizer goes on to clone, so the failures are written before any reconcile).
	var failedAt time.Time
	g.Eventually(func(g Gomega) {
		m := f.get(g)
		m.Status.Provisioning = infrav1.Provisioning{State: infrav1.StatePending, Since: metav1.Now(), Failures: 5}
		g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
		failedAt = m.Status.Provisioning.Since.Truncate(time.Second) // status keeps whole seconds
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	// Five failures in a row: the next clone waits 300ms doubled four times (4.8s).
	restarted := manualReconciler(g, "backoffrestart", nil)
	m := reconcileUntil(t, restarted, f, func(m *infrav1.VCenterMachine) bool {
		return m.Status.Provisioning.State == infrav1.StateWaitingForAddresses
	})
	sent := faults.clones(name)
	g.Expect(sent).To(HaveLen(1))
	g.Expect(sent[0].Sub(failedAt)).To(BeNumerically(">=", 4800*time.Millisecond))
	g.Expect(m.Status.Provisioning.Failures).To(BeZero())
}
