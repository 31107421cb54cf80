package chaos

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/owner"
	"github.com/capwin/capwin/test/framework/harness"
)

// decoyVMs is the number of decoys the harness counts as VMs (vcsim's own are not counted).
func (s *soak) decoyVMs() int {
	if s.c.Provider == harness.HyperV {
		return 1
	}
	return 0
}

// converge waits until every worker runs the new image on its own VM, with no old VM or Node
// left; if that does not happen, it records why each machine is not Ready.
func (s *soak) converge(ctx context.Context) error {
	n, build := s.c.Machines, harness.Build("ltsc2025")
	s.p("%s: faults over; waiting for %d machines on ltsc2025", s.c.Provider, n)
	_, err := s.h.WaitFor(ctx, "converged", s.c.Converge, func(snap harness.Snapshot) bool {
		return snap.Machines == n+1 && snap.MachinesReady == n && snap.NodesReady[build] == n && snap.ReadyNodes() == n &&
			snap.VMs == n+s.decoyVMs()
	}, func(snap harness.Snapshot) { s.p("  %s", snap) })
	s.r.Hostile = s.d.hostileCondition(ctx)
	s.r.BadCluster = s.d.badClusterCondition(ctx)
	reasons, lerr := s.notReady(ctx)
	if lerr != nil {
		return lerr
	}
	s.r.NotReady = reasons
	s.r.Ready = n - len(reasons)
	if err != nil && len(reasons) == 0 {
		s.r.NotReady = append(s.r.NotReady, err.Error())
	}
	return nil
}

// notReady lists the worker machines whose VM is not provisioned, with reason and message.
func (s *soak) notReady(ctx context.Context) ([]string, error) {
	machines := &clusterv1.MachineList{}
	if err := s.h.Management.Client.List(ctx, machines, client.InNamespace(harness.Namespace),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: Workers}); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range machines.Items {
		if harness.MachineReady(&m) && m.DeletionTimestamp.IsZero() {
			continue
		}
		out = append(out, fmt.Sprintf("%s (phase %s, deleting %v): %s; bootstrap: %s", m.Name, m.Status.Phase, !m.DeletionTimestamp.IsZero(),
			s.infraCondition(ctx, m.Spec.InfrastructureRef.Kind, m.Spec.InfrastructureRef.Name), s.bootstrapState(ctx, m)))
	}
	return out, nil
}

// bootstrapState is what a machine's WindowsConfig shows: its DataSecretAvailable condition,
// whether a Machine owns it (capwin's bootstrap reconciler acts only then) and its data Secret.
func (s *soak) bootstrapState(ctx context.Context, m clusterv1.Machine) string {
	ref := m.Spec.Bootstrap.ConfigRef
	if !ref.IsDefined() {
		return "no configRef"
	}
	wc := &bootstrapv1.WindowsConfig{}
	if err := s.h.Management.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, wc); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("WindowsConfig %s: %s (owned by Machine %v, dataSecretName %q)", wc.Name,
		conditionOf(wc.Status.Conditions, bootstrapv1.DataSecretAvailableCondition), owner.MachineOwns(wc, m.Name), wc.Status.DataSecretName)
}

func (s *soak) infraCondition(ctx context.Context, kind, name string) string {
	var obj interface {
		client.Object
		GetConditions() []metav1.Condition
	} = &infrav1.VCenterMachine{}
	if kind == "HyperVMachine" {
		obj = &infrav1.HyperVMachine{}
	}
	if err := s.h.Management.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: name}, obj); err != nil {
		return err.Error()
	}
	return conditionOf(obj.GetConditions(), infrav1.VMProvisionedCondition)
}

// delete deletes both Clusters and waits until no Machine, VM (but the decoys) or bootstrap token
// is left, then counts what was left.
func (s *soak) delete(ctx context.Context) error {
	s.p("%s: deleting the clusters", s.c.Provider)
	begin := time.Now()
	c := s.h.Management.Client
	for _, name := range []string{harness.ClusterName, badCluster} {
		cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: harness.Namespace, Name: name}}
		if err := client.IgnoreNotFound(c.Delete(ctx, cl)); err != nil {
			return err
		}
	}
	gone := func(name string) bool {
		err := c.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: name}, &clusterv1.Cluster{})
		return err != nil && client.IgnoreNotFound(err) == nil
	}
	snap, err := s.h.WaitFor(ctx, "clusters deleted", s.c.Converge, func(snap harness.Snapshot) bool {
		return gone(harness.ClusterName) && gone(badCluster) && snap.Machines == 0 && snap.VMs == s.decoyVMs() && snap.Rules+snap.Roles == 0 && snap.Tagged == 0 && snap.Tokens == 0
	}, func(snap harness.Snapshot) {
		s.p("  %s · rules %d · cluster roles %d · tagged %d · bootstrap tokens %d", snap, snap.Rules, snap.Roles, snap.Tagged, snap.Tokens)
	})
	s.r.Delete = time.Since(begin)
	if err != nil {
		s.r.Violations = append(s.r.Violations, err.Error())
	}
	s.r.LeakedVMs, s.r.LeakedRules, s.r.LeakedTags, s.r.LeakedTokens = max(0, snap.VMs-s.decoyVMs()), snap.Rules+snap.Roles, snap.Tagged, snap.Tokens
	claims := &ipamv1.IPAddressClaimList{}
	if err := c.List(ctx, claims, client.InNamespace(harness.Namespace)); err != nil {
		return err
	}
	s.r.LeakedClaims = len(claims.Items)
	after, err := s.d.state(ctx)
	if err != nil {
		return err
	}
	s.r.DecoysLeft = maps.Equal(s.d.before, after)
	return nil
}

// check fills in the watch's findings and lists the broken invariants.
func (s *soak) check() {
	r := s.r
	dups, toReady := s.w.result()
	r.Duplicates = dups
	if len(toReady) > 0 {
		r.ToReadyP50, r.ToReadyMax = toReady[len(toReady)/2], toReady[len(toReady)-1]
	}
	r.DecoyChanges = s.vf.decoyChanges.Load()
	r.RefusedLogins, r.RefusedBound = s.d.refusedLogins()
	fail := func(format string, args ...any) { r.Violations = append(r.Violations, fmt.Sprintf(format, args...)) }
	if len(r.NotReady) > 0 {
		fail("%d machines not Ready: %v", len(r.NotReady), r.NotReady)
	}
	if len(dups) > 0 {
		fail("duplicate VMs: %v", dups)
	}
	if r.LeakedVMs+r.LeakedRules+r.LeakedTags+r.LeakedClaims+r.LeakedTokens > 0 {
		fail("left after delete: %d VMs, %d DRS rules and VM groups, %d tag attachments, %d IP claims, %d tokens", r.LeakedVMs, r.LeakedRules, r.LeakedTags, r.LeakedClaims, r.LeakedTokens)
	}
	if r.DecoyChanges > 0 || !r.DecoysLeft {
		fail("a VM capwin did not create was touched: %d changing calls, unchanged: %v", r.DecoyChanges, r.DecoysLeft)
	}
	if !strings.HasPrefix(r.Hostile, infrav1.VMNotOwnedReason+":") {
		fail("the machine pointing at a decoy says %q, want %s", r.Hostile, infrav1.VMNotOwnedReason)
	}
	if !strings.HasPrefix(r.BadCluster, infrav1.AuthenticationFailedReason+":") {
		fail("the cluster with a refused credential says %q, want %s", r.BadCluster, infrav1.AuthenticationFailedReason)
	}
	if r.RefusedLogins > r.RefusedBound {
		fail("%d refused logins of the bad credential, bound %d", r.RefusedLogins, r.RefusedBound)
	}
}
