package ipam

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/envtest"
)

// k8s is a direct client of the test API server; nil with -short.
var k8s client.Client

const (
	poolGroup = "ipam.cluster.x-k8s.io"
	poolKind  = "InClusterIPPool"
	cluster   = "c1"
)

// TestMain starts one kube-apiserver with CAPI's CRDs (IPAddressClaim, IPAddress) and capwin's
// (VCenterMachine). With -short no API server is started and the envtest tests skip.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	env, err := envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := run(env, m)
	_ = env.Stop()
	os.Exit(code)
}

func run(env *envtest.Environment, m *testing.M) int {
	var err error
	if k8s, err = client.New(env.Config, client.Options{Scheme: testScheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, clusterv1.AddToScheme, ipamv1.AddToScheme, infrav1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// apiServer skips t when TestMain started no API server.
func apiServer(t *testing.T) Gomega {
	t.Helper()
	if k8s == nil {
		t.Skip("no API server (-short)")
	}
	return NewWithT(t)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// namespace creates a namespace for one test.
func namespace(t *testing.T, g Gomega) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ipam-"}}
	g.Expect(k8s.Create(testContext(t), ns)).To(Succeed())
	return ns.Name
}

// pool is a reference to an InClusterIPPool (which need not exist: the test plays the provider).
func pool(name string) corev1.TypedLocalObjectReference {
	return corev1.TypedLocalObjectReference{APIGroup: ptr.To(poolGroup), Kind: poolKind, Name: name}
}

// device is a NIC claiming from pools.
func device(pools ...string) infrav1.NetworkDevice {
	d := infrav1.NetworkDevice{NetworkName: "VM Network"}
	for _, p := range pools {
		d.AddressesFromPools = append(d.AddressesFromPools, pool(p))
	}
	return d
}

// machine creates a VCenterMachine with the given devices (the claims' owner).
func machine(t *testing.T, g Gomega, ns, name string, devices ...infrav1.NetworkDevice) *infrav1.VCenterMachine {
	t.Helper()
	m := &infrav1.VCenterMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
		Spec:       infrav1.VCenterMachineSpec{Template: "win2022", Network: devices},
	}
	g.Expect(k8s.Create(testContext(t), m)).To(Succeed())
	g.Expect(m.UID).NotTo(BeEmpty())
	return m
}

// bind plays the IPAM provider: it creates an IPAddress for the claim and points the claim's
// status.addressRef at it.
func bind(t *testing.T, g Gomega, ns, claimName, address string, prefix int32, gateway string) {
	t.Helper()
	ctx := testContext(t)
	claim := &ipamv1.IPAddressClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: claimName}, claim)).To(Succeed())
	ip := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: claimName},
		Spec: ipamv1.IPAddressSpec{
			ClaimRef: ipamv1.IPAddressClaimReference{Name: claimName},
			PoolRef:  claim.Spec.PoolRef,
			Address:  address,
			Prefix:   ptr.To(prefix),
			Gateway:  gateway,
		},
	}
	g.Expect(k8s.Create(ctx, ip)).To(Succeed())
	setAddressRef(t, g, ns, claimName, ip.Name)
}

// setAddressRef patches a claim's status.addressRef (and marks it Ready).
func setAddressRef(t *testing.T, g Gomega, ns, claimName, address string) {
	t.Helper()
	ctx := testContext(t)
	claim := &ipamv1.IPAddressClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: claimName}, claim)).To(Succeed())
	base := claim.DeepCopy()
	claim.Status.AddressRef.Name = address
	claim.Status.Conditions = []metav1.Condition{{
		Type: ipamv1.IPAddressClaimReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready",
		LastTransitionTime: metav1.Now(),
	}}
	g.Expect(k8s.Status().Patch(ctx, claim, client.MergeFrom(base))).To(Succeed())
}

// failClaim sets a claim's Ready condition to False with a reason and message.
func failClaim(t *testing.T, g Gomega, ns, claimName, reason, message string) {
	t.Helper()
	ctx := testContext(t)
	claim := &ipamv1.IPAddressClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: claimName}, claim)).To(Succeed())
	base := claim.DeepCopy()
	claim.Status.Conditions = []metav1.Condition{{
		Type: ipamv1.IPAddressClaimReadyCondition, Status: metav1.ConditionFalse, Reason: reason, Message: message,
		LastTransitionTime: metav1.Now(),
	}}
	g.Expect(k8s.Status().Patch(ctx, claim, client.MergeFrom(base))).To(Succeed())
}

// claims lists the claims of a namespace by name.
func claims(t *testing.T, g Gomega, ns string) map[string]ipamv1.IPAddressClaim {
	t.Helper()
	list := &ipamv1.IPAddressClaimList{}
	g.Expect(k8s.List(testContext(t), list, client.InNamespace(ns))).To(Succeed())
	out := map[string]ipamv1.IPAddressClaim{}
	for _, c := range list.Items {
		out[c.Name] = c
	}
	return out
}
