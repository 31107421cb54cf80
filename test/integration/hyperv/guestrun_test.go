package hyperv_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// TestPowerShellDirect: for an image without cloudbase-init, the powershell bootstrap is copied
// into the running guest with PowerShell Direct and started once; it never goes on the config
// drive. A wrong guest password shows on BootstrapSucceeded; fixing the Secret starts it.
func TestPowerShellDirect(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, h, spec := guestRunCluster(t)
	script := []byte("#ps1_sysnative\r\n$CapwinData = 'e30='\r\n")
	mc := f.addMachine(t, "win-psd-"+randSuffix(), "", script, spec)
	guestSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "guest-admin", Namespace: f.ns},
		Data: map[string][]byte{"username": []byte("Administrator"), "password": []byte("wrong")}}
	g.Expect(k8s.Create(ctx, guestSecret)).To(Succeed())

	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	vm, ok := vmOf(h, string(m.UID))
	g.Expect(ok).To(BeTrue())
	files, err := readDrive(h, vm)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).NotTo(HaveKey("user-data"), "the bootstrap data must not be on the config drive")
	g.Expect(h.Guest(vm.ID, func(v *hypervsim.VM) { v.Heartbeat = true })).To(Succeed())
	waitBootstrap(t, mc, infrav1.GuestScriptNotStartedReason, "The credential is invalid")

	guestSecret.Data["password"] = []byte(guestPassword)
	g.Expect(k8s.Update(ctx, guestSecret)).To(Succeed())
	waitBootstrap(t, mc, infrav1.BootstrapRunningReason, "started")
	vm, _ = vmOf(h, string(m.UID))
	g.Expect(vm.GuestPIDs).To(HaveLen(1))
	g.Expect(vm.GuestFiles[guest.GuestBootstrapPath]).To(Equal(script))
	launch, err := guest.ParseLaunch(vm.GuestFiles[guest.GuestLaunchPath])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(launch.ComputerName).To(Equal(m.Status.ComputerName))
	g.Expect(launch.Status.KVPValue).To(Equal("capwin.bootstrap.status"))
	g.Expect(strings.Contains(vm.Notes, "capwin-guest-run:pid=")).To(BeTrue())
	g.Consistently(func() int { v, _ := vmOf(h, string(m.UID)); return len(v.GuestPIDs) }, time.Second, 100*time.Millisecond).Should(Equal(1))
}

// guestRunCluster is a provisioned cluster whose machines bootstrap with format powershell
// through PowerShell Direct on hv1, as the guest administrator of the Secret guest-admin (which
// the caller creates; hv1's guests take the password guestPassword).
func guestRunCluster(t *testing.T) (*fixture, *hypervsim.Host, infrav1.HyperVMachineSpec) {
	f := newCluster(t, nil)
	f.provisioned(t)
	f.format = "powershell"
	spec := defaultSpec()
	spec.Host = "hv1"
	spec.GuestCredentialsRef = &infrav1.SecretReference{Name: "guest-admin"}
	h := host("hv1")
	h.SetGuestPassword(guestPassword)
	return f, h, spec
}

// guestPassword is the administrator password of hv1's guests.
const guestPassword = "Guest-pw1"

func readDrive(h *hypervsim.Host, vm hypervsim.VM) (map[string][]byte, error) {
	if len(vm.DVDs) == 0 {
		return nil, nil
	}
	return readConfigDrive(h.File(vm.DVDs[0]))
}

func waitBootstrap(t *testing.T, mc *machine, reason, msg string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		c := condition(mc.get(g).Status.Conditions, infrav1.BootstrapSucceededCondition)
		g.Expect(c.Reason).To(Equal(reason), "%+v", c)
		g.Expect(c.Message).To(ContainSubstring(msg))
	}, 40*time.Second, 100*time.Millisecond).Should(Succeed())
}
