package main

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestWindowSteps feeds the timeline one old and one new Machine of a rollout, as the watches
// would, and checks the steps it derives.
func TestWindowSteps(t *testing.T) {
	tl := newTimeline()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// The old Machine exists before the window; its deletion starts in it.
	tl.links["old"] = link{infra: "old", set: "ms-old"}
	tl.mark("machine/old", mCreated, at(-100))
	tl.mark("machine/old", mDeleting, at(12))
	tl.mark("machine/old", reasonMark+clusterv1.MachineDeletingWaitingForInfrastructureDeletionReason, at(13))
	tl.mark("infra/old", mDeleting, at(13))
	tl.mark("infra/old", mGone, at(15))
	tl.mark("machine/old", mGone, at(16))
	// The new Machine goes through its milestones; the Node is linked by name.
	tl.links["new"] = link{config: "new", infra: "new", node: "n1", set: "ms-new"}
	for what, s := range map[string]float64{mCreated: 1, mBootstrap: 3, mNodeRef: 8, mReady: 8.5, mAvailable: 9} {
		tl.mark("machine/new", what, at(s))
	}
	tl.mark("infra/new", iProvision, at(6))
	tl.mark("node/n1", mCreated, at(5))
	tl.mark("node/n1", nReady, at(5))
	tl.mark("node/n1", nProvider, at(7))
	tl.scales = []scale{{at: at(0.5), set: "ms-new", from: 0, to: 1}, {at: at(11), set: "ms-old", from: 2, to: 1}, {at: at(17), set: "ms-new", from: 1, to: 2}}

	w := tl.window(t0, at(20))
	if !slices.Equal(w.added, []string{"new"}) || !slices.Equal(w.removed, []string{"old"}) {
		t.Fatalf("added %v, removed %v", w.added, w.removed)
	}
	got := map[string][]float64{}
	for _, s := range w.spans() {
		got[s.name] = s.samples
	}
	for name, want := range map[string]float64{
		"total: Machine created → Available":                             8,
		"Node registered → providerID set":                               2,
		"Node Ready and linked → Machine nodeRef":                        1,
		"provisioned → Node Ready (boot + join)":                         -1,
		"old: delete start → drain done":                                 1,
		"old: VM delete start → infra machine gone (power off, destroy)": 2,
		"total old: delete start → Machine gone":                         4,
		"wave: new Machine Available → old MachineSet scaled down":       2,
		"wave: old MachineSet scaled down → old Machine delete start":    1,
		"wave: old Machine gone → new MachineSet scaled up":              1,
		"wave: new MachineSet scaled up → new Machine created":           0.5,
		"wave: phase start → first new Machine created":                  1,
	} {
		if s := got[name]; len(s) != 1 || s[0] != want {
			t.Errorf("%s: %v, want [%v]", name, s, want)
		}
	}
}

// TestTimelineMarksFirstSight: a milestone keeps the time it was first seen, and a Machine's
// status maps to the milestones.
func TestTimelineMarksFirstSight(t *testing.T) {
	tl := newTimeline()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m"}}
	m.Status.Initialization.BootstrapDataSecretCreated = ptr.To(true)
	tl.machine(m, false)
	first := tl.marks["machine/m"][mBootstrap]
	tl.machine(m, false)
	if !tl.marks["machine/m"][mBootstrap].Equal(first) || first.IsZero() {
		t.Fatalf("bootstrap mark %v, then %v", first, tl.marks["machine/m"][mBootstrap])
	}
	if _, ok := tl.marks["machine/m"][mInfra]; ok {
		t.Fatal("infrastructure marked without infrastructureProvisioned")
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	tl.node(n, true)
	if _, ok := tl.marks["node/n"][mGone]; !ok {
		t.Fatal("deleted Node not marked gone")
	}
}
