package ipam

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func TestEnsureClaimsCreatesClaims(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	// Device 0 has static addresses only; device 1 claims from one pool.
	m := machine(t, g, ns, "m1", infrav1.NetworkDevice{NetworkName: "mgmt", IPAddrs: []string{"10.1.0.5/24"}}, device("pool-a"))

	addrs, ready, waiting, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse())
	g.Expect(addrs).To(BeNil())
	g.Expect(waiting).To(Equal([]string{"m1-1-0"}))

	all := claims(t, g, ns)
	g.Expect(all).To(HaveLen(1))
	claim := all["m1-1-0"]
	g.Expect(claim.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, cluster))
	g.Expect(claim.Finalizers).To(ConsistOf(ClaimFinalizer))
	g.Expect(claim.Spec.ClusterName).To(Equal(cluster))
	g.Expect(claim.Spec.PoolRef).To(Equal(ipamv1.IPPoolReference{APIGroup: poolGroup, Kind: poolKind, Name: "pool-a"}))
	ref := metav1.GetControllerOf(&claim)
	g.Expect(ref).NotTo(BeNil())
	g.Expect(ref.UID).To(Equal(m.UID))
	g.Expect(ref.Kind).To(Equal("VCenterMachine"))
	g.Expect(ref.APIVersion).To(Equal(infrav1.GroupVersion.String()))
	g.Expect(ref.Name).To(Equal("m1"))
}

func TestEnsureClaimsWaitsUntilBound(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m2", device("pool-a"))

	_, ready, waiting, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse())
	g.Expect(waiting).To(Equal([]string{"m2-0-0"}))

	// The provider reports a failure: it shows in the waiting text.
	failClaim(t, g, ns, "m2-0-0", ipamv1.IPAddressClaimReadyPoolExhaustedReason, "pool pool-a has no free address")
	_, ready, waiting, err = EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse())
	g.Expect(waiting).To(Equal([]string{"m2-0-0 (PoolExhausted: pool pool-a has no free address)"}))

	// The claim points at an IPAddress that does not exist (yet): still waiting.
	setAddressRef(t, g, ns, "m2-0-0", "m2-0-0")
	_, ready, waiting, err = EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse())
	g.Expect(waiting).To(ConsistOf(And(HavePrefix("m2-0-0 "), ContainSubstring("not found"))))

	// The IPAddress appears.
	g.Expect(k8s.Create(ctx, &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m2-0-0"},
		Spec: ipamv1.IPAddressSpec{
			ClaimRef: ipamv1.IPAddressClaimReference{Name: "m2-0-0"},
			PoolRef:  ipamv1.IPPoolReference{APIGroup: poolGroup, Kind: poolKind, Name: "pool-a"},
			Address:  "10.0.0.5", Prefix: ptr.To[int32](24), Gateway: "10.0.0.1",
		},
	})).To(Succeed())
	addrs, ready, waiting, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeTrue())
	g.Expect(waiting).To(BeEmpty())
	g.Expect(addrs).To(Equal([][]Address{{{CIDR: "10.0.0.5/24", Gateway: "10.0.0.1"}}}))
}

func TestEnsureClaimsIsIdempotent(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m3", device("pool-a"), device("pool-b"))

	_, _, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	first := claims(t, g, ns)
	g.Expect(first).To(HaveLen(2))

	_, _, waiting, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(waiting).To(ConsistOf("m3-0-0", "m3-1-0"))
	second := claims(t, g, ns)
	g.Expect(second).To(HaveLen(2))
	for name, c := range first {
		g.Expect(second[name].UID).To(Equal(c.UID), name)
		g.Expect(second[name].ResourceVersion).To(Equal(c.ResourceVersion), "%s was written again", name)
	}

	// Once bound, further calls write nothing either.
	bind(t, g, ns, "m3-0-0", "10.0.0.7", 24, "")
	bind(t, g, ns, "m3-1-0", "10.0.1.7", 24, "")
	before := claims(t, g, ns)
	for range 2 {
		addrs, ready, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ready).To(BeTrue())
		g.Expect(addrs).To(Equal([][]Address{{{CIDR: "10.0.0.7/24"}}, {{CIDR: "10.0.1.7/24"}}}))
	}
	after := claims(t, g, ns)
	for name, c := range before {
		g.Expect(after[name].ResourceVersion).To(Equal(c.ResourceVersion), name)
	}
}

func TestEnsureClaimsRepairsOwnedClaim(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m4", device("pool-a"))

	// An older writer made the claim with a plain owner reference, no finalizer and no label.
	claim := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m4-0-0"},
		Spec: ipamv1.IPAddressClaimSpec{
			ClusterName: cluster, PoolRef: ipamv1.IPPoolReference{APIGroup: poolGroup, Kind: poolKind, Name: "pool-a"},
		},
	}
	g.Expect(controllerutil.SetOwnerReference(m, claim, k8s.Scheme())).To(Succeed())
	g.Expect(k8s.Create(ctx, claim)).To(Succeed())

	_, ready, waiting, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse())
	g.Expect(waiting).To(Equal([]string{"m4-0-0"}))
	got := claims(t, g, ns)["m4-0-0"]
	g.Expect(got.UID).To(Equal(claim.UID))
	g.Expect(got.Finalizers).To(ConsistOf(ClaimFinalizer))
	g.Expect(got.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, cluster))
	g.Expect(metav1.IsControlledBy(&got, m)).To(BeTrue())
}

func TestEnsureClaimsRejectsForeignClaim(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m5", device("pool-a", "pool-b"))
	other := machine(t, g, ns, "other", device())

	// m5-0-0 is controlled by another machine; m5-0-1 has no owner at all.
	foreign := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m5-0-0"},
		Spec: ipamv1.IPAddressClaimSpec{
			ClusterName: cluster, PoolRef: ipamv1.IPPoolReference{APIGroup: poolGroup, Kind: poolKind, Name: "pool-a"},
		},
	}
	g.Expect(controllerutil.SetControllerReference(other, foreign, k8s.Scheme())).To(Succeed())
	g.Expect(k8s.Create(ctx, foreign)).To(Succeed())
	orphan := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m5-0-1"},
		Spec: ipamv1.IPAddressClaimSpec{
			ClusterName: cluster, PoolRef: ipamv1.IPPoolReference{APIGroup: poolGroup, Kind: poolKind, Name: "pool-b"},
		},
	}
	g.Expect(k8s.Create(ctx, orphan)).To(Succeed())

	_, ready, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(ready).To(BeFalse())
	g.Expect(err).To(MatchError(And(ContainSubstring(ns+"/m5-0-0"), ContainSubstring("VCenterMachine other"), ContainSubstring("not adopted"))))
	g.Expect(err).To(MatchError(And(ContainSubstring(ns+"/m5-0-1"), ContainSubstring("not owned"))))

	// Neither was touched.
	all := claims(t, g, ns)
	g.Expect(all["m5-0-0"].ResourceVersion).To(Equal(foreign.ResourceVersion))
	g.Expect(metav1.IsControlledBy(ptr.To(all["m5-0-0"]), other)).To(BeTrue())
	g.Expect(all["m5-0-1"].ResourceVersion).To(Equal(orphan.ResourceVersion))
	g.Expect(all["m5-0-1"].OwnerReferences).To(BeEmpty())
}

func TestEnsureClaimsRejectsChangedPool(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m6", device("pool-a"))
	_, _, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())

	_, ready, _, err := EnsureClaims(ctx, k8s, m, cluster, []infrav1.NetworkDevice{device("pool-z")})
	g.Expect(ready).To(BeFalse())
	g.Expect(err).To(MatchError(And(ContainSubstring("m6-0-0"), ContainSubstring("pool-a"), ContainSubstring("pool-z"))))
}

func TestEnsureClaimsNeedsAPIGroup(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m7", device("pool-a"))
	dev := device()
	dev.AddressesFromPools = []corev1.TypedLocalObjectReference{{Kind: poolKind, Name: "pool-a"}}

	_, ready, _, err := EnsureClaims(ctx, k8s, m, cluster, []infrav1.NetworkDevice{dev})
	g.Expect(ready).To(BeFalse())
	g.Expect(err).To(MatchError(ContainSubstring("no apiGroup")))
	g.Expect(claims(t, g, ns)).To(BeEmpty())
}

func TestEnsureClaimsTwoDevicesTwoPools(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m8", device("v4-a", "v6-a"), device("v4-b", "v6-b"))

	_, ready, waiting, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse())
	g.Expect(waiting).To(Equal([]string{"m8-0-0", "m8-0-1", "m8-1-0", "m8-1-1"}))
	all := claims(t, g, ns)
	g.Expect(all).To(HaveLen(4))
	for name, p := range map[string]string{"m8-0-0": "v4-a", "m8-0-1": "v6-a", "m8-1-0": "v4-b", "m8-1-1": "v6-b"} {
		g.Expect(all[name].Spec.PoolRef.Name).To(Equal(p), name)
	}

	// Bound one by one: ready only with the last.
	bind(t, g, ns, "m8-0-0", "10.0.0.10", 24, "10.0.0.1")
	bind(t, g, ns, "m8-0-1", "fd00:0:0:1::10", 64, "fd00:0:0:1::1")
	bind(t, g, ns, "m8-1-0", "192.168.5.20", 32, "")
	_, ready, waiting, err = EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeFalse())
	g.Expect(waiting).To(Equal([]string{"m8-1-1"}))

	bind(t, g, ns, "m8-1-1", "2001:db8::20", 128, "")
	addrs, ready, waiting, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeTrue())
	g.Expect(waiting).To(BeEmpty())
	g.Expect(addrs).To(Equal([][]Address{
		{{CIDR: "10.0.0.10/24", Gateway: "10.0.0.1"}, {CIDR: "fd00:0:0:1::10/64", Gateway: "fd00:0:0:1::1"}},
		{{CIDR: "192.168.5.20/32"}, {CIDR: "2001:db8::20/128"}},
	}))
	g.Expect(claims(t, g, ns)).To(HaveLen(4))
}

func TestEnsureClaimsDevicesWithoutPools(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m9", device(), device("pool-a"), device())

	_, _, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	bind(t, g, ns, "m9-1-0", "10.0.0.9", 24, "10.0.0.1")
	addrs, ready, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeTrue())
	g.Expect(addrs).To(Equal([][]Address{nil, {{CIDR: "10.0.0.9/24", Gateway: "10.0.0.1"}}, nil}))

	// No pools at all: ready at once, nothing created.
	ns2 := namespace(t, g)
	plain := machine(t, g, ns2, "plain", device())
	addrs, ready, waiting, err := EnsureClaims(ctx, k8s, plain, cluster, plain.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ready).To(BeTrue())
	g.Expect(waiting).To(BeEmpty())
	g.Expect(addrs).To(Equal([][]Address{nil}))
	g.Expect(claims(t, g, ns2)).To(BeEmpty())
}

func TestEnsureClaimsBadIPAddress(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m10", device("pool-a"))
	_, _, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())

	bind(t, g, ns, "m10-0-0", "10.0.0.10", 33, "")
	_, ready, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(ready).To(BeFalse())
	g.Expect(err).To(MatchError(And(ContainSubstring("m10-0-0"), ContainSubstring("prefix 33"))))
}

func TestReleaseClaims(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m11", device("pool-a", "pool-b"), device("pool-c"))
	other := machine(t, g, ns, "other", device("pool-a"))

	_, _, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	_, _, _, err = EnsureClaims(ctx, k8s, other, cluster, other.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	bind(t, g, ns, "m11-0-0", "10.0.0.11", 24, "")
	// A claim left by an older spec (a device since removed) is found by its owner reference.
	_, _, _, err = EnsureClaims(ctx, k8s, m, cluster, []infrav1.NetworkDevice{device(), device(), device(), device("pool-d")})
	g.Expect(err).NotTo(HaveOccurred())
	// The IPAM provider's own finalizer on one claim stays.
	held := &ipamv1.IPAddressClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m11-1-0"}, held)).To(Succeed())
	base := held.DeepCopy()
	controllerutil.AddFinalizer(held, "ipam.cluster.x-k8s.io/ReleaseAddress")
	g.Expect(k8s.Patch(ctx, held, client.MergeFrom(base))).To(Succeed())
	g.Expect(claims(t, g, ns)).To(HaveLen(5))

	g.Expect(ReleaseClaims(ctx, k8s, m)).To(Succeed())
	left := claims(t, g, ns)
	g.Expect(left).To(HaveKey("other-0-0"))
	g.Expect(left["other-0-0"].DeletionTimestamp).To(BeNil())
	g.Expect(left["other-0-0"].Finalizers).To(ConsistOf(ClaimFinalizer))
	g.Expect(left).To(HaveKey("m11-1-0"))
	g.Expect(left["m11-1-0"].DeletionTimestamp).NotTo(BeNil())
	g.Expect(left["m11-1-0"].Finalizers).To(ConsistOf("ipam.cluster.x-k8s.io/ReleaseAddress"))
	g.Expect(left).To(HaveLen(2), "m11-0-0, m11-0-1 and m11-3-0 are gone")

	// Again: nothing left to do, no error.
	g.Expect(ReleaseClaims(ctx, k8s, m)).To(Succeed())
	g.Expect(claims(t, g, ns)).To(HaveLen(2))

	// The provider lets go; release stays a no-op once all are gone.
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m11-1-0"}, held)).To(Succeed())
	base = held.DeepCopy()
	held.Finalizers = nil
	g.Expect(k8s.Patch(ctx, held, client.MergeFrom(base))).To(Succeed())
	err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m11-1-0"}, held)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	g.Expect(ReleaseClaims(ctx, k8s, m)).To(Succeed())
	g.Expect(claims(t, g, ns)).To(HaveLen(1))
}

func TestReleaseClaimsByName(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m12", device("pool-a"))

	// A claim of an earlier VCenterMachine of the same name (another UID) is found by its name.
	stale := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "m12-0-0", Finalizers: []string{ClaimFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "VCenterMachine", Name: "m12",
				UID: "00000000-0000-0000-0000-000000000001", Controller: ptr.To(true),
			}},
		},
		Spec: ipamv1.IPAddressClaimSpec{
			ClusterName: cluster, PoolRef: ipamv1.IPPoolReference{APIGroup: poolGroup, Kind: poolKind, Name: "pool-a"},
		},
	}
	g.Expect(k8s.Create(ctx, stale)).To(Succeed())
	// EnsureClaims does not adopt it...
	_, _, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).To(MatchError(ContainSubstring("not adopted")))
	// ...but deleting the machine releases it.
	g.Expect(ReleaseClaims(ctx, k8s, m)).To(Succeed())
	g.Expect(claims(t, g, ns)).To(BeEmpty())
}

func TestToAddress(t *testing.T) {
	for _, tc := range []struct {
		address, gateway string
		prefix           *int32
		want             Address
		err              string
	}{
		{address: "10.0.0.5", prefix: ptr.To[int32](24), gateway: "10.0.0.1", want: Address{CIDR: "10.0.0.5/24", Gateway: "10.0.0.1"}},
		{address: "10.0.0.5", prefix: ptr.To[int32](0), want: Address{CIDR: "10.0.0.5/0"}},
		{address: "10.0.0.5", prefix: ptr.To[int32](32), want: Address{CIDR: "10.0.0.5/32"}},
		{address: "10.0.0.5", prefix: ptr.To[int32](33), err: "prefix 33 is out of range"},
		{address: "fd00:0::5", prefix: ptr.To[int32](64), gateway: "FD00::1", want: Address{CIDR: "fd00::5/64", Gateway: "fd00::1"}},
		{address: "2001:db8::1", prefix: ptr.To[int32](128), want: Address{CIDR: "2001:db8::1/128"}},
		{address: "2001:db8::1", prefix: ptr.To[int32](129), err: "prefix 129 is out of range"},
		{address: "10.0.0.5", prefix: ptr.To[int32](-1), err: "out of range"},
		{address: "10.0.0.5", err: "no prefix"},
		{address: "10.0.0.5/24", prefix: ptr.To[int32](24), err: "address"},
		{address: "fe80::1%eth0", prefix: ptr.To[int32](64), err: "zone"},
		{address: "10.0.0.5", prefix: ptr.To[int32](24), gateway: "gw", err: "gateway"},
		{address: "10.0.0.5", prefix: ptr.To[int32](24), gateway: "fd00::1", err: "family"},
	} {
		got, err := toAddress(&ipamv1.IPAddress{Spec: ipamv1.IPAddressSpec{Address: tc.address, Prefix: tc.prefix, Gateway: tc.gateway}})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s/%v gw %q: got %v, %v; want error with %q", tc.address, tc.prefix, tc.gateway, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s/%v gw %q: got %v, %v; want %v", tc.address, tc.prefix, tc.gateway, got, err, tc.want)
		}
	}
}

func TestClaimProblem(t *testing.T) {
	g := NewWithT(t)
	claim := &ipamv1.IPAddressClaim{}
	g.Expect(claimProblem(claim)).To(BeEmpty())

	claim.SetV1Beta1Conditions(clusterv1.Conditions{{ //nolint:staticcheck // IPAM providers still report v1beta1 conditions; claimProblem reads them
		Type: clusterv1.ReadyCondition, Status: corev1.ConditionFalse, Reason: "PoolNotReady", Message: "pool\n is  paused",
	}})
	g.Expect(claimProblem(claim)).To(Equal("PoolNotReady: pool is paused"))

	// The v1beta2 condition wins.
	claim.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready"}}
	g.Expect(claimProblem(claim)).To(BeEmpty())
	claim.Status.Conditions[0].Status = metav1.ConditionFalse
	claim.Status.Conditions[0].Reason = "AllocationFailed"
	claim.Status.Conditions[0].Message = strings.Repeat("x", 1000)
	g.Expect(len([]rune(claimProblem(claim)))).To(BeNumerically("<=", len("AllocationFailed: ")+maxReasonLen+1))
}

func TestClaimName(t *testing.T) {
	if got := ClaimName("vm-a", 2, 7); got != "vm-a-2-7" {
		t.Errorf("ClaimName = %q", got)
	}
}

// staleList is a client whose List sees nothing yet, like a cache that lags behind.
type staleList struct{ client.Client }

func (staleList) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

func TestReleaseClaimsFindsSpecNamesWithoutList(t *testing.T) {
	g := apiServer(t)
	ctx := testContext(t)
	ns := namespace(t, g)
	m := machine(t, g, ns, "m13", device("pool-a", "pool-b"))
	_, _, _, err := EnsureClaims(ctx, k8s, m, cluster, m.Spec.Network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(claims(t, g, ns)).To(HaveLen(2))

	g.Expect(ReleaseClaims(ctx, staleList{k8s}, m)).To(Succeed())
	g.Expect(claims(t, g, ns)).To(BeEmpty())
}
