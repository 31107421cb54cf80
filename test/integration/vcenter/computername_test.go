package vcenter_test

import (
	"encoding/base64"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
)

// TestComputerNameTaken: a machine whose own name another machine of the cluster already holds
// as its computer name (in another case) gets another computer name; the manager finds the
// holder through its field index.
func TestComputerNameTaken(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	name := "win-" + randSuffix()
	// The holder is not reconciled by the suite's manager (another watch filter).
	holder := &infrav1.VCenterMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "holder-" + randSuffix(), Namespace: f.ns,
			Labels: map[string]string{clusterv1.ClusterNameLabel: f.name, clusterv1.WatchLabel: "nobody"}},
		Spec: defaultSpec(),
	}
	g.Expect(k8s.Create(ctx, holder)).To(Succeed())
	holder.Status.ComputerName = "WIN-" + name[4:]
	g.Expect(k8s.Status().Update(ctx, holder)).To(Succeed())
	g.Eventually(func(g Gomega) { // the manager's cache holds it
		h := &infrav1.VCenterMachine{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(holder), h)).To(Succeed())
		g.Expect(h.Status.ComputerName).NotTo(BeEmpty())
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())

	f.addMachine(t, name, userData, defaultSpec())
	var got string
	g.Eventually(func(g Gomega) {
		got = f.get(g).Status.ComputerName
		g.Expect(got).NotTo(BeEmpty())
	}, 30*time.Second, 50*time.Millisecond).Should(Succeed())
	g.Expect(got).NotTo(Equal(name))
	g.Expect(got).To(HavePrefix("win-"))
	g.Expect(len(got)).To(BeNumerically("<=", 15))
}

// TestNamingStrategy: a machine template's naming template names the computer (and so the guest's
// local-hostname); a name the template gives again and another machine holds, with no .random to
// draw again, is InvalidSpec, and no VM is made.
func TestNamingStrategy(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	spec := defaultSpec()
	spec.NamingStrategy = &infrav1.NamingStrategy{Template: `{{ .cluster.name | trunc 4 }}-IIS-{{ .machine.name | trunc -5 }}`}
	name := "iis-pool-" + randSuffix()
	f.addMachine(t, name, userData, spec)
	want := "win-iis-" + name[len(name)-5:]
	m := f.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(m.Status.ComputerName).To(Equal(want))
	raw, err := base64.StdEncoding.DecodeString(extraConfig(readVM(g, vc(g), vmRef(m.Status.VM.ID)))["guestinfo.metadata"])
	g.Expect(err).NotTo(HaveOccurred())
	var md guest.Metadata
	g.Expect(yaml.Unmarshal(raw, &md)).To(Succeed())
	g.Expect(md.LocalHostname).To(Equal(want))

	// A second machine whose name ends the same way: the template gives the same name again.
	f.addMachine(t, "iis-other-"+name[len(name)-5:], userData, spec)
	refused := f.waitReason(t, infrav1.InvalidSpecReason)
	cond := condition(refused.Status.Conditions, infrav1.VMProvisionedCondition)
	g.Expect(cond.Message).To(ContainSubstring(`namingStrategy: the naming template gives "` + want + `", which another machine of the cluster has: use .random`))
	g.Expect(refused.Status.ComputerName).To(BeEmpty())
	g.Expect(vmsWithUUID(g, vc(g), string(refused.UID))).To(BeEmpty())
}
