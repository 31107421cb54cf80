package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// span is one step of the breakdown and its samples (seconds).
type span struct {
	name, who string
	samples   []float64
}

// window is what the timeline saw of one phase: the Machines created in it (new), those whose
// deletion started in it (old), and the MachineSets' replica changes.
type window struct {
	t          *timeline
	start, end time.Time
	added      []string
	removed    []string
	newSets    map[string]bool
	oldSets    map[string]bool
}

func (t *timeline) window(start, end time.Time) *window {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := &window{t: t, start: start, end: end, newSets: map[string]bool{}, oldSets: map[string]bool{}}
	for name, l := range t.links {
		if at, ok := t.marks["machine/"+name][mCreated]; ok && in(at, start, end) {
			w.added = append(w.added, name)
			w.newSets[l.set] = true
		}
		if at, ok := t.marks["machine/"+name][mDeleting]; ok && in(at, start, end) {
			w.removed = append(w.removed, name)
			w.oldSets[l.set] = true
		}
	}
	return w
}

func in(at, start, end time.Time) bool { return !at.Before(start) && !at.After(end) }

// at is when a Machine's object (kind "machine", "infra" or "node") first showed what.
func (w *window) at(machine, kind, what string) (time.Time, bool) {
	l := w.t.links[machine]
	name := map[string]string{"machine": machine, "config": l.config, "infra": l.infra, "node": l.node}[kind]
	if name == "" {
		return time.Time{}, false
	}
	at, ok := w.t.marks[kind+"/"+name][what]
	return at, ok
}

// first is the earliest of several milestones.
func (w *window) first(machine, kind string, whats ...string) (time.Time, bool) {
	var best time.Time
	for _, what := range whats {
		if at, ok := w.at(machine, kind, what); ok && (best.IsZero() || at.Before(best)) {
			best = at
		}
	}
	return best, !best.IsZero()
}

// drainDone is when a Machine's deletion got past the drain: the first Deleting reason after
// DrainingNode, or its infrastructure machine's deletion.
func (w *window) drainDone(machine string) (time.Time, bool) {
	var marks []string
	for _, r := range []string{clusterv1.MachineDeletingWaitingForVolumeDetachReason, clusterv1.MachineDeletingWaitingForPreTerminateHookReason,
		clusterv1.MachineDeletingWaitingForInfrastructureDeletionReason, clusterv1.MachineDeletingWaitingForBootstrapDeletionReason,
		clusterv1.MachineDeletingDeletingNodeReason} {
		marks = append(marks, reasonMark+r)
	}
	d, ok := w.first(machine, "machine", marks...)
	i, iok := w.at(machine, "infra", mDeleting)
	if iok && (!ok || i.Before(d)) {
		return i, true
	}
	return d, ok
}

type point func(machine string) (time.Time, bool)

// between samples to − from for each machine where both are known.
func (w *window) between(name, who string, machines []string, from, to point) span {
	s := span{name: name, who: who}
	for _, m := range machines {
		a, aok := from(m)
		b, bok := to(m)
		if aok && bok {
			s.samples = append(s.samples, b.Sub(a).Seconds())
		}
	}
	return s
}

func (w *window) mark(kind, what string) point {
	return func(m string) (time.Time, bool) { return w.at(m, kind, what) }
}

// later is the later of two points (both must be known).
func later(a, b point) point {
	return func(m string) (time.Time, bool) {
		x, xok := a(m)
		y, yok := b(m)
		if !xok || !yok {
			return time.Time{}, false
		}
		if y.After(x) {
			return y, true
		}
		return x, true
	}
}

// spans is the breakdown of the window: the new Machines' create, the old Machines' delete
// and the reaction times of CAPI's MachineDeployment and MachineSet controllers between them.
func (w *window) spans() []span {
	w.t.mu.Lock()
	defer w.t.mu.Unlock()
	add, del := w.added, w.removed
	created, avail := w.mark("machine", mCreated), w.mark("machine", mAvailable)
	boot, prov := w.mark("machine", mBootstrap), w.mark("infra", iProvision)
	powerOn := func(m string) (time.Time, bool) {
		return w.first(m, "infra", iState+string(infrav1.StatePoweringOn), iState+string(infrav1.StateWaitingForAddresses), iProvision)
	}
	nodeReady := w.mark("node", nReady)
	spans := []span{
		w.between("Machine created → WindowsConfig owned by it", "CAPI Machine", add, created, w.mark("config", cOwned)),
		w.between("WindowsConfig owned → data Secret written", "capwin bootstrap", add, w.mark("config", cOwned), w.mark("config", cData)),
		w.between("data Secret written → Machine bootstrap data ready", "CAPI Machine", add, w.mark("config", cData), boot),
		w.between("bootstrap data → clone sent", "capwin infra", add, boot, w.mark("infra", iState+string(infrav1.StateCloning))),
		w.between("clone sent → VM powering on (clone, reconfigure done)", "capwin infra + hypervisor", add, w.mark("infra", iState+string(infrav1.StateCloning)), powerOn),
		w.between("VM powering on → provisioned (IP seen)", "capwin infra + guest", add, powerOn, prov),
		w.between("provisioned → Node registered", "guest (simulated)", add, prov, w.mark("node", mCreated)),
		w.between("provisioned → Node Ready (boot + join)", "guest (simulated)", add, prov, nodeReady),
		w.between("Node registered → providerID set", "capwin infra (Node link)", add, w.mark("node", mCreated), w.mark("node", nProvider)),
		w.between("Node Ready and linked → Machine nodeRef", "CAPI Machine", add, later(nodeReady, w.mark("node", nProvider)), w.mark("machine", mNodeRef)),
		w.between("nodeRef → Machine Ready", "CAPI Machine", add, w.mark("machine", mNodeRef), w.mark("machine", mReady)),
		w.between("Machine Ready → Available", "CAPI Machine (minReadySeconds)", add, w.mark("machine", mReady), avail),
		w.between("Machine: created → bootstrap data ready", "CAPI Machine + bootstrap provider", add, created, boot),
		w.between("Machine: bootstrap data ready → infrastructure provisioned", "infrastructure provider + CAPI Machine", add, boot, w.mark("machine", mInfra)),
		w.between("Machine: infrastructure provisioned → nodeRef", "guest join, Node link, CAPI Machine", add, w.mark("machine", mInfra), w.mark("machine", mNodeRef)),
		w.between("total: Machine created → Available", "", add, created, avail),
		w.between("old: delete start → drain done", "CAPI Machine (drain)", del, w.mark("machine", mDeleting), w.drainDone),
		w.between("old: drain done → VM delete start", "CAPI Machine", del, w.drainDone, w.mark("infra", mDeleting)),
		w.between("old: VM delete start → infra machine gone (power off, destroy)", "capwin infra + hypervisor", del, w.mark("infra", mDeleting), w.mark("infra", mGone)),
		w.between("old: infra machine gone → Machine gone (Node deleted)", "CAPI Machine", del, w.mark("infra", mGone), w.mark("machine", mGone)),
		w.between("total old: delete start → Machine gone", "", del, w.mark("machine", mDeleting), w.mark("machine", mGone)),
	}
	return append(spans, w.gaps()...)
}

// gaps are the waits between waves: how long CAPI took to react to the previous event.
func (w *window) gaps() []span {
	var ups, downs []time.Time
	for _, s := range w.t.scales {
		switch {
		case !in(s.at, w.start, w.end):
		case w.newSets[s.set] && s.to > s.from:
			ups = append(ups, s.at)
		case w.oldSets[s.set] && s.to < s.from:
			downs = append(downs, s.at)
		}
	}
	avail := w.times(w.added, "machine", mAvailable)
	gone := w.times(w.removed, "machine", mGone)
	return []span{
		{name: "wave: phase start → first new Machine created", who: "CAPI MachineDeployment + MachineSet", samples: sinceLast(w.times(w.added, "machine", mCreated)[:min(1, len(w.added))], []time.Time{w.start})},
		{name: "wave: new Machine Available → old MachineSet scaled down", who: "CAPI MachineDeployment", samples: sinceLast(downs, avail)},
		{name: "wave: old MachineSet scaled down → old Machine delete start", who: "CAPI MachineSet", samples: sinceLast(w.times(w.removed, "machine", mDeleting), downs)},
		{name: "wave: old Machine gone → new MachineSet scaled up", who: "CAPI MachineDeployment", samples: sinceLast(ups, gone)},
		{name: "wave: new MachineSet scaled up → new Machine created", who: "CAPI MachineSet", samples: sinceLast(w.times(w.added, "machine", mCreated), ups)},
	}
}

// times are the sorted times machines showed what.
func (w *window) times(machines []string, kind, what string) []time.Time {
	var out []time.Time
	for _, m := range machines {
		if at, ok := w.at(m, kind, what); ok {
			out = append(out, at)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// sinceLast is, for each event, the time since the latest cause at or before it (events with
// no cause before them are left out).
func sinceLast(events, causes []time.Time) []float64 {
	var out []float64
	for _, e := range events {
		var last time.Time
		for _, c := range causes {
			if !c.After(e) && c.After(last) {
				last = c
			}
		}
		if !last.IsZero() {
			out = append(out, e.Sub(last).Seconds())
		}
	}
	return out
}

// printBreakdown writes the table of one phase.
func printBreakdown(b *strings.Builder, s *step, tl *timeline) {
	win := tl.window(s.start, s.start.Add(s.wall))
	fmt.Fprintf(b, "%s (%s): per-machine breakdown — %d Machines created, %d deleted; seconds, from watch events seen by this process:\n\n",
		s.name, dur(s.wall), len(win.added), len(win.removed))
	fmt.Fprintln(b, "| step | who | n | mean | p50 | p90 | max |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|")
	for _, sp := range win.spans() {
		if len(sp.samples) == 0 {
			continue
		}
		slices.Sort(sp.samples)
		sum := 0.0
		for _, v := range sp.samples {
			sum += v
		}
		name := sp.name
		if strings.HasPrefix(name, "total") {
			name = "**" + name + "**"
		}
		fmt.Fprintf(b, "| %s | %s | %d | %.2f | %.2f | %.2f | %.2f |\n", name, sp.who, len(sp.samples),
			sum/float64(len(sp.samples)), quantile(sp.samples, 0.5), quantile(sp.samples, 0.9), sp.samples[len(sp.samples)-1])
	}
	fmt.Fprintln(b)
}

// quantile of sorted samples (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
