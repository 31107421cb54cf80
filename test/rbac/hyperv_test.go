package rbac_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/guestos"
	"github.com/capwin/capwin/test/hypervsim"
)

// testHyperV: a HyperVClusterIdentity, a HyperVCluster using it over one simulated host (WinRM),
// a HyperVMachineTemplate and one HyperVMachine from create to delete.
func testHyperV(t *testing.T, s *suite) {
	const user, password, parentDisk = "capwin", "Host-pw1", `C:\golden\win2022.vhdx`
	g := NewWithT(t)
	ctx := t.Context()
	g.Expect(hypervsim.CheckScripts()).To(Succeed())
	h := hypervsim.NewHost("hv1", 131072, []string{"external"}, map[string]int64{parentDisk: 30 << 30})
	h.SetJobDelay(100 * time.Millisecond)
	srv, err := h.Serve(map[string]string{user: password})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(srv.Close)

	// The hosts' login is a HyperVClusterIdentity's: its Secret lives in the manager's namespace,
	// and it selects the tenant namespace by label.
	ns := s.namespace(t, "rbac-hv-")
	g.Expect(s.admin.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "hyperv-hosts", Namespace: identityNamespace},
		Data:       map[string][]byte{"username": []byte(user), "password": []byte(password)},
	})).To(Succeed())
	id := &infrav1.HyperVClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "hosts"}, Spec: infrav1.ClusterIdentitySpec{
		SecretName: "hyperv-hosts", AllowedNamespaces: infrav1.AllowedNamespaces{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}}}}
	g.Expect(s.admin.Create(ctx, id)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(id), id)).To(Succeed())
		g.Expect(id.Status.Ready).To(BeTrue(), "%+v", id.Status.Conditions)
	})
	cluster := s.cluster(t, ns, "HyperVCluster")
	hc := &infrav1.HyperVCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"},
			OwnerReferences: []metav1.OwnerReference{ownedBy(cluster, "Cluster")}},
		Spec: infrav1.HyperVClusterSpec{VirtualSwitch: "external",
			CredentialsRef: infrav1.HyperVIdentityReference{Kind: infrav1.HyperVClusterIdentityKind, Name: id.Name},
			Hosts:          []infrav1.HyperVHost{{Name: h.Name, Address: srv.Host, Port: int32(srv.Port), CABundle: srv.CACertPEM()}}},
	}
	g.Expect(s.admin.Create(ctx, hc)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(hc), hc)).To(Succeed())
		g.Expect(ptr.Deref(hc.Status.Initialization.Provisioned, false)).To(BeTrue(), "%+v", hc.Status.Conditions)
	})
	s.infrastructureProvisioned(t, cluster)

	spec := infrav1.HyperVMachineSpec{ParentDisk: parentDisk, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}}
	tmpl := &infrav1.HyperVMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "win-md-0", Namespace: ns},
		Spec:       infrav1.HyperVMachineTemplateSpec{Template: infrav1.HyperVMachineTemplateResource{Spec: spec}},
	}
	g.Expect(s.admin.Create(ctx, tmpl)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(tmpl), tmpl)).To(Succeed())
		g.Expect(tmpl.Status.NodeInfo.OperatingSystem).To(Equal("windows"))
	})

	machine := s.machine(t, ns, "win-md-0-rbac", "HyperVMachine", userData)
	hvm := &infrav1.HyperVMachine{
		ObjectMeta: metav1.ObjectMeta{Name: machine.Name, Namespace: ns, Labels: machine.Labels,
			OwnerReferences: []metav1.OwnerReference{ownedBy(machine, "Machine")}},
		Spec: spec,
	}
	g.Expect(s.admin.Create(ctx, hvm)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(hvm), hvm)).To(Succeed())
		g.Expect(condition(hvm.Status.Conditions, infrav1.VMProvisionedCondition).Reason).To(Equal(infrav1.WaitingForAddressesReason), "%+v", hvm.Status.Conditions)
		g.Expect(hvm.Status.VM.ID).NotTo(BeEmpty())
	})
	// The guest boots: integration services report an address.
	g.Expect(h.Guest(hvm.Status.VM.ID, func(v *hypervsim.VM) { v.Heartbeat, v.NICs[0].IPs = true, []string{"10.2.0.5"} })).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(hvm), hvm)).To(Succeed())
		g.Expect(ptr.Deref(hvm.Status.Initialization.Provisioned, false)).To(BeTrue(), "%+v", hvm.Status.Conditions)
	})
	s.linkNode(t, s.infra, guestos.NodeName(hvm.Status.ComputerName), hvm.Spec.ProviderID)

	g.Expect(s.admin.Delete(ctx, hvm)).To(Succeed())
	s.eventually(t, s.infra, func(g Gomega) {
		g.Expect(apierrors.IsNotFound(s.admin.Get(ctx, client.ObjectKeyFromObject(hvm), hvm))).To(BeTrue(), "finalizers %v", hvm.Finalizers)
	})
	g.Expect(h.VMs()).To(BeEmpty())
}
