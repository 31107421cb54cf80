package rbac_test

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// cluster creates Cluster "win" whose workload cluster is the envtest apiserver itself (its
// kubeconfig Secret holds the admin kubeconfig, as CAPI's control plane providers write one).
func (s *suite) cluster(t *testing.T, ns, infraKind string) *clusterv1.Cluster {
	g := NewWithT(t)
	u, err := url.Parse(s.env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	host, portStr, _ := net.SplitHostPort(u.Host)
	port, _ := strconv.ParseInt(portStr, 10, 32)
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns},
		Spec:       clusterv1.ClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: host, Port: int32(port)}},
	}
	if infraKind != "" {
		c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: infraKind, Name: "win"}
	}
	g.Expect(s.admin.Create(t.Context(), c)).To(Succeed())
	g.Expect(s.admin.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "win-kubeconfig", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
		Type:       clusterv1.ClusterSecretType, Data: map[string][]byte{"value": s.env.KubeConfig},
	})).To(Succeed())
	return c
}

// infrastructureProvisioned plays CAPI's Cluster controller once the infrastructure cluster is.
func (s *suite) infrastructureProvisioned(t *testing.T, c *clusterv1.Cluster) {
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	NewWithT(t).Expect(s.admin.Status().Update(t.Context(), c)).To(Succeed())
}

// machine creates a bootstrap data Secret and a Machine of Cluster "win" that uses it.
func (s *suite) machine(t *testing.T, ns, name, infraKind string, userData []byte) *clusterv1.Machine {
	g := NewWithT(t)
	labels := map[string]string{clusterv1.ClusterNameLabel: "win"}
	g.Expect(s.admin.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: ns, Labels: labels},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": userData, "format": []byte("cloud-config")},
	})).To(Succeed())
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName: "win", Version: "v1.36.3",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: infraKind, Name: name},
		},
	}
	g.Expect(s.admin.Create(t.Context(), m)).To(Succeed())
	return m
}

func ownedBy(o client.Object, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: o.GetName(), UID: o.GetUID()}
}

// linkNode registers a Node without a providerID and waits for the manager to set it (it reads
// and patches the Node through its ClusterCache, i.e. the workload kubeconfig).
func (s *suite) linkNode(t *testing.T, m *running, name, providerID string) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	NewWithT(t).Expect(s.admin.Create(t.Context(), node)).To(Succeed())
	t.Cleanup(func() { _ = s.admin.Delete(context.Background(), node) })
	s.eventually(t, m, func(g Gomega) {
		g.Expect(s.admin.Get(t.Context(), client.ObjectKeyFromObject(node), node)).To(Succeed())
		g.Expect(node.Spec.ProviderID).To(Equal(providerID))
	})
}
