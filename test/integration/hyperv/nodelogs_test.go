package hyperv_test

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// collectInGuest is every simulated guest of the suite running a log collector: its zip is the
// collector's output path (a stand-in; the harness's simulated Windows guest makes real ones).
func collectInGuest(_ *hypervsim.Host, _ string, script []byte) ([]byte, error) {
	doc, err := guest.ParseCollect(script)
	if err != nil {
		return nil, err
	}
	return []byte(doc.Output), nil
}

// askLogs sets a log request on the machine, with the guest login Secret credentials ("" for
// spec.guestCredentialsRef), and returns the answer once the manager wrote it.
func (mc *machine) askLogs(t *testing.T, id, credentials string) *corev1.Secret {
	t.Helper()
	g := NewWithT(t)
	annotations := map[string]any{infrav1.CollectLogsAnnotation: id, infrav1.CollectLogsCredentialsAnnotation: nil}
	if credentials != "" {
		annotations[infrav1.CollectLogsCredentialsAnnotation] = credentials
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	g.Expect(k8s.Patch(ctx, mc.get(g), client.RawPatch(apitypes.MergePatchType, patch))).To(Succeed())
	s := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: mc.f.ns, Name: infrav1.NodeLogsSecretName(mc.hvm.Name)}, s)).To(Succeed())
		g.Expect(s.Annotations).To(HaveKeyWithValue(infrav1.CollectLogsAnnotation, id))
	}, 40*time.Second, 100*time.Millisecond).Should(Succeed())
	return s
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
	s := mc.askLogs(t, "r1", "logs-admin")
	g.Expect(string(s.Data[infrav1.NodeLogsMessageKey])).To(ContainSubstring("The credential is invalid"))
	g.Expect(s.Data).NotTo(HaveKey(infrav1.NodeLogsArchiveKey))

	admin.Data["password"] = []byte(guestPassword)
	g.Expect(k8s.Update(ctx, admin)).To(Succeed())
	s = mc.askLogs(t, "r2", "logs-admin")
	g.Expect(string(s.Data[infrav1.NodeLogsArchiveKey])).To(Equal(guest.PathsOfCollect("r2").Output))
	g.Expect(string(s.Type)).To(Equal(infrav1.NodeLogsSecretType))
	g.Expect(s.OwnerReferences).To(ContainElement(HaveField("UID", m.UID)))

	s = mc.askLogs(t, "r3", "hosts")
	g.Expect(string(s.Data[infrav1.NodeLogsMessageKey])).To(ContainSubstring("hypervisor login"))
}
