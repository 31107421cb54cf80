package hyperv

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func placed(uid, deployment, host string) *infrav1.HyperVMachine {
	m := &infrav1.HyperVMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: uid, UID: types.UID(uid),
		Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}}}
	if deployment != "" {
		m.Labels[clusterv1.MachineDeploymentNameLabel] = deployment
	}
	m.Status.VM.Host = host
	return m
}

// TestPlacementsFollowTheInformer: the VMs per host come from the informer's events (add,
// host change, delete, a delete seen late), per MachineDeployment and per cluster, without the
// machine being placed, and with the hosts this manager chose until a status shows them or a
// minute passes.
func TestPlacementsFollowTheInformer(t *testing.T) {
	var p Placements
	now := time.Now()
	md := group{"ns", "win", "md-0"}
	cluster := group{namespace: "ns", cluster: "win"}
	check := func(step string, g group, self string, want map[string]int) {
		t.Helper()
		if diff := cmp.Diff(want, p.Spread(g, types.UID(self), now)); diff != "" {
			t.Errorf("%s: VMs per host (-want +got):\n%s", step, diff)
		}
	}

	p.OnAdd(placed("a", "md-0", "hv1"), true)
	p.OnAdd(placed("b", "md-0", "hv2"), true)
	p.OnAdd(placed("c", "md-1", "hv1"), true)
	p.OnAdd(placed("d", "", "hv3"), true)
	p.OnAdd(placed("e", "md-0", ""), true) // not placed yet
	check("initial list", md, "e", map[string]int{"hv1": 1, "hv2": 1})
	check("the machine itself is not counted", md, "a", map[string]int{"hv1": 0, "hv2": 1})
	check("a machine without a MachineDeployment spreads over the cluster", cluster, "x", map[string]int{"hv1": 2, "hv2": 1, "hv3": 1})
	check("another cluster", group{"ns", "other", "md-0"}, "x", map[string]int{})

	p.Choose("e", md, "hv3", now)
	check("a choice counts before its status shows it", md, "x", map[string]int{"hv1": 1, "hv2": 1, "hv3": 1})
	check("and in the cluster", cluster, "x", map[string]int{"hv1": 2, "hv2": 1, "hv3": 2})
	check("but not for the machine itself", md, "e", map[string]int{"hv1": 1, "hv2": 1})
	p.OnUpdate(placed("e", "md-0", ""), placed("e", "md-0", "hv3"))
	check("once the status shows it, once", md, "x", map[string]int{"hv1": 1, "hv2": 1, "hv3": 1})

	p.OnUpdate(placed("a", "md-0", "hv1"), placed("a", "md-0", "hv2")) // failed over
	check("a host change moves the count", md, "x", map[string]int{"hv2": 2, "hv3": 1})
	p.OnDelete(placed("b", "md-0", "hv2"))
	p.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/e", Obj: placed("e", "md-0", "hv3")})
	check("deletes, also one seen late", md, "x", map[string]int{"hv2": 1})
	check("the cluster after the deletes", cluster, "x", map[string]int{"hv1": 1, "hv2": 1, "hv3": 1})

	p.Choose("f", md, "hv1", now)
	p.Choose("g", md, "hv1", now.Add(-2*chosenFor))
	check("a choice older than a minute is forgotten", md, "x", map[string]int{"hv1": 1, "hv2": 1})
	p.Unchoose("f")
	check("an unrecorded choice is taken back", md, "x", map[string]int{"hv2": 1})
	if len(p.chosen) != 0 {
		t.Errorf("choices kept: %v", p.chosen)
	}
}
