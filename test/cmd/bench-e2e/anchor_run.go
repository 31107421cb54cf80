package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/test/framework/harness"
)

// anchorStep is one measured phase of the anchor, as the capwin run's steps.
type anchorStep struct {
	name              string
	machines          int
	start             time.Time
	wall, first, half time.Duration
}

// anchorScenario runs the capwin run's rollout phases on the in-memory provider: create M
// machines → Ready, roll them out to the second template, delete the Cluster.
func (b *bench) anchorScenario(ctx context.Context, c config) error {
	progress("anchor: starting Cluster API's in-memory provider")
	a, err := startAnchor(ctx, b.h, c.concurrency)
	if err != nil {
		return err
	}
	defer a.stop()
	if err := a.createCluster(ctx); err != nil {
		return fmt.Errorf("anchor Cluster: %w", err)
	}
	m := c.rolloutMachines
	var old sets.Set[string]
	err = b.anchorPhase(ctx, fmt.Sprintf("create %d → Ready", m), m, func() error {
		return a.createWorkers(ctx, int32(m), int32(c.maxSurge)) //nolint:gosec // G115: machine counts, far below 2^31
	}, func(ms []clusterv1.Machine) (int, bool) {
		n := readyMachines(ms, nil)
		return n, n == m && len(ms) == m
	})
	if err != nil {
		return err
	}
	if old, err = a.machineNames(ctx); err != nil {
		return err
	}
	err = b.anchorPhase(ctx, fmt.Sprintf("rollout %d → second template", m), m, func() error { return a.roll(ctx) },
		func(ms []clusterv1.Machine) (int, bool) {
			n := readyMachines(ms, old)
			return n, n == m && len(ms) == m
		})
	if err != nil {
		return err
	}
	return b.anchorPhase(ctx, fmt.Sprintf("delete Cluster (%d)", m), m, func() error {
		return a.h.Management.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: anchorCluster, Namespace: anchorNS}})
	}, func(ms []clusterv1.Machine) (int, bool) {
		gone := apierrors.IsNotFound(a.h.Management.Client.Get(ctx, client.ObjectKey{Namespace: anchorNS, Name: anchorCluster}, &clusterv1.Cluster{}))
		return m - len(ms), gone && len(ms) == 0
	})
}

// anchorPhase starts a phase with do and polls the anchor's Machines every 100ms until done says
// the phase is over; done also counts the machines done so far for the milestones.
func (b *bench) anchorPhase(ctx context.Context, name string, machines int, do func() error, done func([]clusterv1.Machine) (int, bool)) error {
	progress("anchor phase %q", name)
	start := time.Now()
	st := &anchorStep{name: name, machines: machines, start: start}
	if err := do(); err != nil {
		return fmt.Errorf("anchor %s: %w", name, err)
	}
	err := until(ctx, func() bool {
		ms := &clusterv1.MachineList{}
		if err := b.h.Management.Client.List(ctx, ms, client.InNamespace(anchorNS)); err != nil {
			return false
		}
		k, over := done(ms.Items)
		if k >= 1 && st.first == 0 {
			st.first = time.Since(start)
		}
		if 2*k >= machines && st.half == 0 {
			st.half = time.Since(start)
		}
		return over
	})
	st.wall = time.Since(start)
	b.r.anchor = append(b.r.anchor, st)
	progress("anchor phase %q: %s", name, st.wall.Round(100*time.Millisecond))
	if err != nil {
		return fmt.Errorf("anchor %s: %w", name, err)
	}
	return nil
}

// readyMachines counts the Ready Machines not named in old (nil: all).
func readyMachines(ms []clusterv1.Machine, old sets.Set[string]) int {
	n := 0
	for i := range ms {
		if ms[i].DeletionTimestamp.IsZero() && harness.MachineReady(&ms[i]) && !old.Has(ms[i].Name) {
			n++
		}
	}
	return n
}

func (a *anchor) machineNames(ctx context.Context) (sets.Set[string], error) {
	ms := &clusterv1.MachineList{}
	if err := a.h.Management.Client.List(ctx, ms, client.InNamespace(anchorNS)); err != nil {
		return nil, err
	}
	names := sets.New[string]()
	for _, m := range ms.Items {
		names.Insert(m.Name)
	}
	return names, nil
}

// printAnchor writes the side-by-side table: capwin's phases of M machines against the same
// phases on the in-memory provider, per phase and per wave of the rollout.
func (r *report) printAnchor(b *strings.Builder) {
	if len(r.anchor) == 0 {
		return
	}
	c := r.cfg
	waves := int(math.Ceil(float64(c.rolloutMachines) / float64(c.maxSurge)))
	fmt.Fprintf(b, "### Side by side with Cluster API's in-memory provider\n\n")
	fmt.Fprintf(b, "The same phases of %d machines (maxSurge %d, maxUnavailable 0, %d waves) on CAPI's in-memory provider (CAPD's DevMachine, backend inMemory: no infrastructure, bootstrap data given), in this process after capwin's phases, on the same management cluster and CAPI controllers.\n\n",
		c.rolloutMachines, c.maxSurge, waves)
	fmt.Fprintf(b, "| phase | capwin %s | in-memory | capwin / in-memory | capwin first / half done | in-memory first / half done |\n", c.provider)
	fmt.Fprintln(b, "|---|---|---|---|---|---|")
	for _, a := range r.anchor {
		kind, _, _ := strings.Cut(a.name, " ")
		var own *step
		for _, s := range r.steps {
			if strings.HasPrefix(s.name, kind) && s.machines == a.machines {
				own = s // the last of its kind with M machines
			}
		}
		if own == nil {
			fmt.Fprintf(b, "| %s | – | %s | – | – | %s / %s |\n", a.name, dur(a.wall), dur(a.first), dur(a.half))
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %.2f | %s / %s | %s / %s |\n", a.name, dur(own.wall), dur(a.wall),
			own.wall.Seconds()/a.wall.Seconds(), dur(own.first), dur(own.half), dur(a.first), dur(a.half))
		if kind == "rollout" {
			fmt.Fprintf(b, "| per wave (÷%d) | %s | %s | %.2f | | |\n", waves, dur(own.wall/time.Duration(waves)),
				dur(a.wall/time.Duration(waves)), own.wall.Seconds()/a.wall.Seconds())
		}
	}
	fmt.Fprintln(b)
	for _, a := range r.anchor {
		if !strings.HasPrefix(a.name, "delete") {
			printBreakdown(b, &step{name: "in-memory " + a.name, machines: a.machines, start: a.start, wall: a.wall}, r.timeline)
		}
	}
}
