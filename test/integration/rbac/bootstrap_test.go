package rbac_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// testBootstrap: a WindowsConfig of a Machine whose Cluster's control plane is initialized and
// whose workload cluster (the envtest apiserver) is reachable and whose registry CA is in a
// ConfigMap: a bootstrap token there, the data Secret here; then delete (the token is revoked).
func testBootstrap(t *testing.T, s *suite) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := s.namespace(t, "rbac-wc-")
	cluster := s.cluster(t, ns, "")
	g.Expect(s.admin.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "win-ca", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"tls.crt": s.env.Config.CAData, "tls.key": []byte("unused")},
	})).To(Succeed())
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	cluster.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: metav1.ConditionTrue,
		Reason: "Test", LastTransitionTime: metav1.Now()}}
	g.Expect(s.admin.Status().Update(ctx, cluster)).To(Succeed())

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "win-md-0-rbac", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "win", Version: "v1.36.3",
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "WindowsConfig", Name: "win-md-0-rbac"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterMachine", Name: "win-md-0-rbac"},
		},
	}
	g.Expect(s.admin.Create(ctx, machine)).To(Succeed())
	cfg := &bootstrapv1.WindowsConfig{
		ObjectMeta: metav1.ObjectMeta{Name: machine.Name, Namespace: ns, Labels: machine.Labels,
			OwnerReferences: []metav1.OwnerReference{ownedBy(machine, "Machine")}},
		Spec: bootstrapv1.WindowsConfigSpec{Format: bootstrapv1.FormatPowerShell,
			// A registry CA from a ConfigMap: the manager reads it with its own identity.
			Containerd: bootstrapv1.Containerd{Registries: []bootstrapv1.Registry{{Host: "registry.corp.example",
				RegistryAccess: bootstrapv1.RegistryAccess{CA: &bootstrapv1.CABundle{ConfigMap: &bootstrapv1.ConfigMapKey{Name: "corp-ca", Key: "ca.pem"}}}}}}},
	}
	g.Expect(s.admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "corp-ca", Namespace: ns},
		Data: map[string]string{"ca.pem": string(s.env.Config.CAData)}})).To(Succeed())
	g.Expect(s.admin.Create(ctx, cfg)).To(Succeed())
	s.eventually(t, s.boot, func(g Gomega) {
		g.Expect(s.admin.Get(ctx, client.ObjectKeyFromObject(cfg), cfg)).To(Succeed())
		g.Expect(ptr.Deref(cfg.Status.Initialization.DataSecretCreated, false)).To(BeTrue(), "%+v", cfg.Status.Conditions)
		g.Expect(s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: cfg.Name}, &corev1.Secret{})).To(Succeed())
	})

	g.Expect(s.admin.Delete(ctx, cfg)).To(Succeed())
	s.eventually(t, s.boot, func(g Gomega) {
		g.Expect(apierrors.IsNotFound(s.admin.Get(ctx, client.ObjectKeyFromObject(cfg), cfg))).To(BeTrue(), "finalizers %v", cfg.Finalizers)
	})
}
