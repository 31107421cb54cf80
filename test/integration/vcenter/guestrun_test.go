package vcenter_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// guestPassword is the only password the simulated guests accept.
const guestPassword = "Guest-s3cret"

var psScript = []byte("#ps1_sysnative\r\n$CapwinData = 'e30='\r\n$ErrorActionPreference = 'Stop'\r\n")

// guestRunMachine creates a Windows machine whose powershell bootstrap runs through guest
// operations (no cloudbase-init in the image), with one static NIC, and waits for its VM to run.
func guestRunMachine(t *testing.T, name string) (*fixture, *infrav1.VCenterMachine, types.ManagedObjectReference) {
	t.Helper()
	return guestRunMachineWith(t, name, "guest-admin")
}

// guestRunMachineWith is guestRunMachine with the guest credentials Secret credentials.
func guestRunMachineWith(t *testing.T, name, credentials string) (*fixture, *infrav1.VCenterMachine, types.ManagedObjectReference) {
	t.Helper()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	f.format = "powershell"
	spec := defaultSpec()
	spec.Network = []infrav1.NetworkDevice{{NetworkName: "VM Network", IPAddrs: []string{"10.1.0.5/24"}, Gateway4: "10.1.0.1", Nameservers: []string{"10.1.0.2"}}}
	spec.GuestCredentialsRef = &infrav1.SecretReference{Name: credentials}
	f.addMachine(t, name, psScript, spec)
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	vms := vmsWithUUID(g, vc(g), string(m.UID))
	g.Expect(vms).To(HaveLen(1))
	return f, m, vms[0].Self
}

func (f *fixture) guestSecret(t *testing.T, password string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "guest-admin", Namespace: f.ns},
		Data:       map[string][]byte{"username": []byte("Administrator"), "password": []byte(password)},
	}
	NewWithT(t).Expect(k8s.Create(ctx, s)).To(Succeed())
	return s
}

func (f *fixture) waitBootstrap(t *testing.T, reason, msg string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		c := condition(f.get(g).Status.Conditions, infrav1.BootstrapSucceededCondition)
		g.Expect(c.Reason).To(Equal(reason), "%+v", c)
		g.Expect(c.Message).To(ContainSubstring(msg))
	}, 15*time.Second, 50*time.Millisecond).Should(Succeed())
}

// TestGuestOperations: without cloudbase-init, capwin copies the launcher and the bootstrap
// script into the guest once VMware Tools runs, starts the launcher once, and never stores the
// user data in the VM config. A start that was not recorded (manager stopped) is found in the
// guest's process list, not repeated.
func TestGuestOperations(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, m, ref := guestRunMachine(t, "win-md-0-guestops-"+randSuffix())
	f.guestSecret(t, guestPassword)
	c := vc(g)
	ec := extraConfig(readVM(g, c, ref))
	g.Expect(ec).NotTo(HaveKey("guestinfo.userdata"), "the user data never enters the VM config")
	g.Expect(ec).To(HaveKey("guestinfo.metadata"))
	f.waitBootstrap(t, infrav1.WaitingForGuestReason, "guest agent")
	g.Expect(guestOps.Guest(ref.Value).Processes).To(BeEmpty())

	guestSets(g, c, ref, map[string]string{"SET.guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)})
	var started vcsimops.Guest
	g.Eventually(func(g Gomega) {
		started = guestOps.Guest(ref.Value)
		g.Expect(started.Processes).To(HaveLen(1))
		g.Expect(extraConfig(readVM(g, c, ref))).To(HaveKeyWithValue("capwin.bootstrap.started", "pid="+itoa(started.Processes[0].Pid)))
	}, 15*time.Second, 50*time.Millisecond).Should(Succeed())
	p := started.Processes[0]
	g.Expect(p.Program).To(Equal(guest.GuestPowerShell))
	g.Expect(p.Arguments).To(Equal(guest.GuestLaunchArgs))
	g.Expect(p.User).To(Equal("Administrator"))
	g.Expect(started.Files[guest.GuestBootstrapPath]).To(Equal(psScript))
	launch, err := guest.ParseLaunch(started.Files[guest.GuestLaunchPath])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.HasSuffix(string(started.Files[guest.GuestLaunchPath]), guest.LaunchScript())).To(BeTrue())
	vm := readVM(g, c, ref)
	var mac string
	for _, d := range vm.Config.Hardware.Device {
		if nic, ok := d.(types.BaseVirtualEthernetCard); ok {
			mac = strings.ToUpper(strings.ReplaceAll(nic.GetVirtualEthernetCard().MacAddress, ":", "-"))
		}
	}
	g.Expect(launch.ComputerName).To(Equal(m.Status.ComputerName))
	g.Expect(launch.Network).To(HaveLen(1))
	g.Expect(launch.Network[0].MAC).To(Equal(mac))
	g.Expect(launch.Network[0].Addresses).To(Equal([]string{"10.1.0.5/24"}))
	g.Expect(launch.Network[0].Nameservers).To(Equal([]string{"10.1.0.2"}))
	g.Expect(launch.Status.GuestinfoKey).To(Equal("guestinfo.capwin.bootstrap.status"))
	// The condition says the script was started until its first report, through later reconciles.
	f.waitBootstrap(t, infrav1.BootstrapRunningReason, "started")
	g.Consistently(func(g Gomega) {
		c := condition(f.get(g).Status.Conditions, infrav1.BootstrapSucceededCondition)
		g.Expect(c.Reason).To(Equal(infrav1.BootstrapRunningReason), "%+v", c)
		g.Expect(c.Message).To(ContainSubstring("started through the guest agent"))
	}, 2*time.Second, 100*time.Millisecond).Should(Succeed())

	// A manager that stopped after starting the launcher but before recording it: the marker is
	// gone, the launcher is still listed in the guest; capwin records it and starts nothing.
	guestSets(g, c, ref, map[string]string{"capwin.bootstrap.started": ""})
	g.Eventually(func(g Gomega) {
		g.Expect(extraConfig(readVM(g, c, ref))).To(HaveKeyWithValue("capwin.bootstrap.started", "pid="+itoa(p.Pid)))
	}, 15*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Consistently(func() int { return len(guestOps.Guest(ref.Value).Processes) }, time.Second, 100*time.Millisecond).Should(Equal(1))

	// The script reports like under cloudbase-init.
	guestSets(g, c, ref, map[string]string{"SET.guest.ipAddress": "10.1.0.5", "guestinfo.capwin.bootstrap.status": `{"step":"finish","state":"Succeeded"}`})
	f.waitReason(t, infrav1.ProvisionedReason)
	f.waitBootstrap(t, infrav1.BootstrapSucceededReason, "")
}

// TestGuestOperationsCredentials: a missing Secret and a refused login show on BootstrapSucceeded
// and start nothing; fixing the Secret starts the bootstrap.
func TestGuestOperationsCredentials(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, _, ref := guestRunMachine(t, "win-md-0-guestcreds-"+randSuffix())
	guestSets(g, vc(g), ref, map[string]string{"SET.guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)})
	f.waitBootstrap(t, infrav1.GuestCredentialsMissingReason, "guest credentials Secret guest-admin")

	secret := f.guestSecret(t, "wrong")
	f.waitBootstrap(t, infrav1.GuestScriptNotStartedReason, `refused the login of user "Administrator"`)
	g.Expect(guestOps.Guest(ref.Value).Processes).To(BeEmpty())

	secret.Data["password"] = []byte(guestPassword)
	g.Expect(k8s.Update(ctx, secret)).To(Succeed())
	g.Eventually(func() int { return len(guestOps.Guest(ref.Value).Processes) }, 15*time.Second, 100*time.Millisecond).Should(Equal(1))
	f.waitBootstrap(t, infrav1.BootstrapRunningReason, "started")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestGuestOperationsUntrustedHost: files go to the VM's ESX host, which must present the
// certificate vCenter reports for it; another certificate stops the copy before anything runs.
func TestGuestOperationsUntrustedHost(t *testing.T) {
	g := NewWithT(t)
	good := soap.ThumbprintSHA256(vcsim.Certificate())
	vcsimops.TrustHosts(model, strings.Repeat("AB:", 31)+"AB")
	t.Cleanup(func() { vcsimops.TrustHosts(model, good) })
	f, _, ref := guestRunMachine(t, "win-md-0-guesttls-"+randSuffix())
	f.guestSecret(t, guestPassword)
	guestSets(g, vc(g), ref, map[string]string{"SET.guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)})
	f.waitBootstrap(t, infrav1.GuestScriptNotStartedReason, "thumbprint does not match")
	g.Expect(guestOps.Guest(ref.Value).Processes).To(BeEmpty())

	vcsimops.TrustHosts(model, good)
	g.Eventually(func() int { return len(guestOps.Guest(ref.Value).Processes) }, 15*time.Second, 100*time.Millisecond).Should(Equal(1))
}
