package hyperv_test

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/scenario"
)

// collectInGuest is every simulated guest of the suite running a log collector: its zip is the
// collector's output path (a stand-in; the harness's simulated Windows guest makes real ones).
func collectInGuest(_ *hypervsim.Host, _ string, script []byte) ([]byte, error) {
	doc, err := guest.ParseCollect(script)
	if err != nil {
		return nil, err
	}
	if strings.Contains(doc.Output, "huge") { // a guest that hands back more than a Secret holds
		return bytes.Repeat([]byte{'x'}, 2<<20), nil
	}
	return []byte(doc.Output), nil
}

// TestCollectLogsWithPowerShellDirect: a log request runs the collector in the guest with
// PowerShell Direct, as the guest administrator of a Secret the request names (the machine
// bootstraps through cloudbase-init and has no guestCredentialsRef), and its zip lands in the
// machine's node logs Secret. A wrong password and the hosts' own login are answered with why, and
// nothing is collected.
func TestCollectLogsWithPowerShellDirect(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	spec := defaultSpec()
	spec.Host = "hv1"
	host("hv1").SetGuestPassword(guestPassword)
	mc := f.addMachine(t, "win-logs-"+randSuffix(), "", userData, spec)
	m := mc.waitReason(t, infrav1.WaitingForAddressesReason)
	vm, ok := vmOf(host("hv1"), string(m.UID))
	g.Expect(ok).To(BeTrue())
	g.Expect(host("hv1").Guest(vm.ID, func(v *hypervsim.VM) { v.Heartbeat = true })).To(Succeed())

	admin := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "logs-admin", Namespace: f.ns},
		Data: map[string][]byte{"username": []byte("Administrator"), "password": []byte("wrong")}}
	g.Expect(k8s.Create(ctx, admin)).To(Succeed())
	s := scenario.AskLogs(t, k8s, mc.get(g), "r1", "logs-admin")
	g.Expect(string(s.Data[infrav1.NodeLogsMessageKey])).To(ContainSubstring("The credential is invalid"))
	g.Expect(s.Data).NotTo(HaveKey(infrav1.NodeLogsArchiveKey))

	admin.Data["password"] = []byte(guestPassword)
	g.Expect(k8s.Update(ctx, admin)).To(Succeed())
	s = scenario.AskLogs(t, k8s, mc.get(g), "r2", "logs-admin")
	g.Expect(string(s.Data[infrav1.NodeLogsArchiveKey])).To(Equal(guest.PathsOfCollect("r2").Output))
	g.Expect(string(s.Type)).To(Equal(infrav1.NodeLogsSecretType))
	g.Expect(s.OwnerReferences).To(ContainElement(HaveField("UID", m.UID)))

	s = scenario.AskLogs(t, k8s, mc.get(g), "r3", "hosts")
	g.Expect(string(s.Data[infrav1.NodeLogsMessageKey])).To(ContainSubstring("hypervisor login"))

	// Too large for a Secret: answered once, with why.
	s = scenario.AskLogs(t, k8s, mc.get(g), "huge", "logs-admin")
	g.Expect(string(s.Data[infrav1.NodeLogsMessageKey])).To(ContainSubstring("the guest's archive has 2097152 bytes, more than the 1572864 a log archive may"),
		"refused on the host: the zip does not cross WinRM")
	g.Expect(s.Data).NotTo(HaveKey(infrav1.NodeLogsArchiveKey))
}
