package windowsconfig_test

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// fixture is one workload cluster with one Windows Machine.
type fixture struct {
	ns      string
	cluster *clusterv1.Cluster
	machine *clusterv1.Machine
	config  *bootstrapv1.WindowsConfig
}

type fixtureOpts struct {
	infraProvisioned bool
	cpInitialized    bool
	paused           bool
	// unreachable points the workload kubeconfig at a port nobody listens on.
	unreachable bool
	spec        bootstrapv1.WindowsConfigSpec
	// shortJoinTimeout hands the objects to the suite's manager whose join timeout is short.
	shortJoinTimeout bool
	// filter, when set, is the objects' watch-filter label (no manager of the suite takes them).
	filter string
}

func readyCluster() fixtureOpts {
	return fixtureOpts{infraProvisioned: true, cpInitialized: true, spec: bootstrapv1.WindowsConfigSpec{Format: bootstrapv1.FormatPowerShell}}
}

// newFixture creates the namespace, the cluster Secrets (CA, kubeconfig pointing at the envtest
// apiserver), a Cluster with the requested status, a Machine and its WindowsConfig.
func newFixture(t *testing.T, o fixtureOpts) *fixture {
	t.Helper()
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "wc-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	f := &fixture{ns: ns.Name}
	filter := defaultFilter
	if o.shortJoinTimeout {
		filter = shortJoinFilter
	}
	if o.filter != "" {
		filter = o.filter
	}
	labels := func() map[string]string {
		return map[string]string{clusterv1.ClusterNameLabel: "win", clusterv1.WatchLabel: filter}
	}

	ca, err := os.ReadFile("testdata/ca.crt")
	g.Expect(err).NotTo(HaveOccurred())
	u, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	host, portStr, _ := net.SplitHostPort(u.Host)
	port, _ := strconv.ParseInt(portStr, 10, 32)

	f.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: f.ns, Labels: map[string]string{clusterv1.WatchLabel: filter}},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: host, Port: int32(port)},
			Paused:               ptr.To(o.paused),
		},
	}
	g.Expect(k8s.Create(ctx, f.cluster)).To(Succeed())
	for _, s := range []*corev1.Secret{
		clusterSecret(f, "win-ca", map[string][]byte{"tls.crt": ca, "tls.key": []byte("unused")}),
		clusterSecret(f, "win-kubeconfig", map[string][]byte{"value": kubeconfig(g, o.unreachable)}),
	} {
		g.Expect(k8s.Create(ctx, s)).To(Succeed())
	}
	f.cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(o.infraProvisioned)
	f.cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(o.cpInitialized)
	status := metav1.ConditionFalse
	if o.cpInitialized {
		status = metav1.ConditionTrue
	}
	f.cluster.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition, Status: status,
		Reason: "Test", LastTransitionTime: metav1.Now()}}
	g.Expect(k8s.Status().Update(ctx, f.cluster)).To(Succeed())

	f.machine = &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "win-md-0-abcde", Namespace: f.ns, Labels: labels()},
		Spec: clusterv1.MachineSpec{
			ClusterName: "win",
			Version:     "v1.36.3",
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "WindowsConfig", Name: "win-md-0-abcde"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "VCenterMachine", Name: "win-md-0-abcde"},
		},
	}
	g.Expect(k8s.Create(ctx, f.machine)).To(Succeed())
	f.config = &bootstrapv1.WindowsConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "win-md-0-abcde", Namespace: f.ns,
			Labels:          labels(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: f.machine.Name, UID: f.machine.UID}}},
		Spec: o.spec,
	}
	g.Expect(k8s.Create(ctx, f.config)).To(Succeed())
	return f
}

// kubeconfig is the envtest apiserver's kubeconfig, or one for a closed port.
func kubeconfig(g Gomega, unreachable bool) []byte {
	if !unreachable {
		return env.KubeConfig
	}
	u, err := url.Parse(env.Config.Host)
	g.Expect(err).NotTo(HaveOccurred())
	return bytes.ReplaceAll(env.KubeConfig, []byte(u.Host), []byte("127.0.0.1:1"))
}

func clusterSecret(f *fixture, name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
		Type:       clusterv1.ClusterSecretType, Data: data,
	}
}

// get re-reads the WindowsConfig.
func (f *fixture) get(g Gomega) *bootstrapv1.WindowsConfig {
	c := &bootstrapv1.WindowsConfig{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.config), c)).To(Succeed())
	return c
}

// condition returns the DataSecretAvailable condition (zero value when absent).
func (f *fixture) condition(g Gomega, t string) metav1.Condition {
	for _, c := range f.get(g).Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// waitReason waits until DataSecretAvailable has the given reason.
func (f *fixture) waitReason(t *testing.T, reason string) metav1.Condition {
	t.Helper()
	var c metav1.Condition
	NewWithT(t).Eventually(func(g Gomega) {
		c = f.condition(g, bootstrapv1.DataSecretAvailableCondition)
		g.Expect(c.Reason).To(Equal(reason), "condition: %+v", c)
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return c
}

// dataSecret waits for the bootstrap data Secret and returns it.
func (f *fixture) dataSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(ptr.Deref(f.get(g).Status.Initialization.DataSecretCreated, false)).To(BeTrue())
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.config.Name}, s)).To(Succeed())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	return s
}

// scriptData unpacks user data the way cloudbase-init does and returns its JSON data document.
func scriptData(g Gomega, userData []byte) string {
	u, err := userdata.Unpack(userData)
	g.Expect(err).NotTo(HaveOccurred())
	return string(u.Data)
}

// dataDocument is the decoded data document of user data.
func dataDocument(g Gomega, userData []byte) *userdata.Document {
	doc, err := userdata.DecodeDocument([]byte(scriptData(g, userData)))
	g.Expect(err).NotTo(HaveOccurred())
	return doc
}

// tokenSecret returns the bootstrap token Secret of a token ID in the workload cluster.
func tokenSecret(g Gomega, id string) *corev1.Secret {
	s := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}, s)).To(Succeed())
	return s
}
