package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/benchutil"
	"github.com/capwin/capwin/test/framework/harness"
)

// Names of the two MachineDeployments: "win" for the create phase, "roll" for the rollout.
const (
	createMD  = "win"
	rolloutMD = "roll"
	oldImage  = "ltsc2022"
	newImage  = "ltsc2025"
)

type bench struct {
	h   *harness.Harness
	src *sources
	r   *report
}

// step is one measured phase.
type step struct {
	name     string
	machines int // the per-machine figures divide by this
	start    time.Time
	wall     time.Duration
	// first and half are when the first and half of the phase's machines were done (Node Ready on
	// the target build, or Machine gone); 0 if not tracked.
	first, half time.Duration
	// peakMachines is the most Machines seen at once.
	peakMachines int
	d            counters
	mem          mem
	guests       int    // guests running at the end
	tokens       tokens // bootstrap tokens alive at the end
	detail       bool
	guestWaits   *guestWaits // create phases with -guest-step-time
}

// scenario runs the phases; the report gets every phase that finished.
func (b *bench) scenario(ctx context.Context, c config) error {
	h := b.h
	begin := time.Now()
	if err := h.CreateCluster(ctx); err != nil {
		return err
	}
	if err := b.waitCluster(ctx); err != nil {
		return err
	}
	b.r.clusterReady = time.Since(begin)
	b.r.idle = memory()
	n, m := c.machines, c.rolloutMachines
	err := b.phase(ctx, fmt.Sprintf("create %d → Ready", n), n, true, func(st *step) error {
		if err := h.CreateWorkers(ctx, harness.Workers{Name: createMD, Image: oldImage, Replicas: int32(n)}); err != nil { //nolint:gosec // G115: a machine count, far below 2^31
			return err
		}
		return b.waitWorkers(ctx, st, n, oldImage, func(s harness.Snapshot) int { return s.NodesReady[harness.Build(oldImage)] })
	})
	if err != nil {
		return err
	}
	if m > 0 {
		err = b.phase(ctx, fmt.Sprintf("scale %d → 0", n), n, false, func(st *step) error {
			if err := h.ScaleWorkers(ctx, createMD, 0); err != nil {
				return err
			}
			return b.waitWorkers(ctx, st, 0, oldImage, func(s harness.Snapshot) int { return n - s.Machines })
		})
		if err != nil {
			return err
		}
		err = b.phase(ctx, fmt.Sprintf("create %d → Ready", m), m, false, func(st *step) error {
			if err := h.CreateWorkers(ctx, harness.Workers{Name: rolloutMD, Image: oldImage, Replicas: int32(m), //nolint:gosec // G115: a machine count, far below 2^31
				MaxSurge: int32(c.maxSurge), MaxUnavailable: 0}); err != nil { //nolint:gosec // G115: a machine count, far below 2^31
				return err
			}
			return b.waitWorkers(ctx, st, m, oldImage, func(s harness.Snapshot) int { return s.NodesReady[harness.Build(oldImage)] })
		})
		if err != nil {
			return err
		}
		err = b.phase(ctx, fmt.Sprintf("rollout %d → %s", m, newImage), m, true, func(st *step) error {
			if err := h.SetWorkersImage(ctx, rolloutMD, newImage); err != nil {
				return err
			}
			return b.waitWorkers(ctx, st, m, newImage, func(s harness.Snapshot) int { return s.NodesReady[harness.Build(newImage)] })
		})
		if err != nil {
			return err
		}
	}
	left := n
	if m > 0 {
		left = m
	}
	return b.phase(ctx, fmt.Sprintf("delete Cluster (%d)", left), left, false, func(st *step) error {
		return b.deleteCluster(ctx, st)
	})
}

// deleteCluster deletes the Cluster and waits, as harness.DeleteCluster does, until it is gone
// with no Machine, VM, disk or config drive left — but not for the bootstrap tokens: a token
// nothing revokes would hold the phase until it expires (15 min), so tokens are reported instead.
func (b *bench) deleteCluster(ctx context.Context, st *step) error {
	c := b.h.Management.Client
	key := client.ObjectKey{Namespace: harness.Namespace, Name: harness.ClusterName}
	if err := client.IgnoreNotFound(c.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}})); err != nil {
		return err
	}
	show := b.printer(st)
	s, err := b.h.WaitFor(ctx, st.name, time.Until(deadline(ctx)), func(s harness.Snapshot) bool {
		return apierrors.IsNotFound(c.Get(ctx, key, &clusterv1.Cluster{})) && s.Machines == 0 && s.VMs == 0 && s.Files == 0
	}, func(s harness.Snapshot) {
		st.peakMachines = max(st.peakMachines, s.Machines)
		k := st.machines - s.Machines
		if k >= 1 && st.first == 0 {
			st.first = time.Since(st.start)
		}
		if 2*k >= st.machines && st.half == 0 {
			st.half = time.Since(st.start)
		}
		show("%s · files %d · bootstrap tokens %d", s, s.Files, s.Tokens)
	})
	b.r.leftover = s
	if err == nil {
		b.r.leftObjects = b.leftObjects(ctx)
	}
	return err
}

// leftObjects counts the WindowsConfigs and infrastructure machines still in the namespace
// (read live), e.g. those CAPI's MachineSet created but could not clean up.
func (b *bench) leftObjects(ctx context.Context) string {
	r := b.h.Management.Manager.GetAPIReader()
	configs := &bootstrapv1.WindowsConfigList{}
	var machines client.ObjectList = &infrav1.VCenterMachineList{}
	kind := "VCenterMachines"
	if b.h.Provider() == harness.HyperV {
		machines, kind = &infrav1.HyperVMachineList{}, "HyperVMachines"
	}
	if err := r.List(ctx, configs, client.InNamespace(harness.Namespace)); err != nil {
		return err.Error()
	}
	if err := r.List(ctx, machines, client.InNamespace(harness.Namespace)); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d WindowsConfigs and %d %s", len(configs.Items), meta.LenList(machines), kind)
}

// phase measures do: wall time, counter deltas, memory at its end.
func (b *bench) phase(ctx context.Context, name string, machines int, detail bool, do func(*step) error) error {
	progress("phase %q", name)
	before, err := b.src.read(ctx)
	if err != nil {
		return fmt.Errorf("%s: read counters: %w", name, err)
	}
	st := &step{name: name, machines: machines, start: time.Now(), detail: detail}
	err = do(st)
	st.wall = time.Since(st.start)
	after, rerr := b.src.read(context.WithoutCancel(ctx))
	st.d = sub(after, before)
	if b.r.cfg.guestStepTime > 0 && strings.HasPrefix(name, "create") {
		st.guestWaits = measureGuestWaits(st, b.h.Guests.Reports(), b.r.timeline)
	}
	st.mem = memory()
	st.guests = len(b.h.Guests.Running())
	if t, terr := b.checkTokens(context.WithoutCancel(ctx)); terr == nil {
		st.tokens = t
	} else {
		st.tokens.alive = -1
	}
	b.r.steps = append(b.r.steps, st)
	progress("phase %q: %s", name, st.wall.Round(100*time.Millisecond))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if rerr != nil {
		return fmt.Errorf("%s: read counters: %w", name, rerr)
	}
	return nil
}

// mem is the process's memory at one moment.
type mem struct {
	rss, peakRSS string
	heapMiB      float64 // Go heap in use after a GC
	goroutines   int
}

func memory() mem {
	var m mem
	m.rss, m.peakRSS = benchutil.Memory()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.heapMiB, m.goroutines = float64(ms.HeapInuse)/(1<<20), runtime.NumGoroutine()
	return m
}

// waitWorkers waits as harness.WaitWorkers does (exactly n Machines, all Ready, n VMs, n Ready
// Windows Nodes of the image's build and no other Node) and records the phase's milestones:
// done(s) counts the machines done so far, out of st.machines.
func (b *bench) waitWorkers(ctx context.Context, st *step, n int, image string, done func(harness.Snapshot) int) error {
	build := harness.Build(image)
	show := b.printer(st)
	_, err := b.h.WaitFor(ctx, st.name, time.Until(deadline(ctx)), func(s harness.Snapshot) bool {
		return s.Machines == n && s.MachinesReady == n && s.VMs == n && s.NodesReady[build] == n && s.ReadyNodes() == n && s.Nodes == n
	}, func(s harness.Snapshot) {
		st.peakMachines = max(st.peakMachines, s.Machines)
		k := done(s)
		if k >= 1 && st.first == 0 {
			st.first = time.Since(st.start)
		}
		if 2*k >= st.machines && st.half == 0 {
			st.half = time.Since(st.start)
		}
		show("%s", s)
	})
	return err
}

// printer prints progress at most every 10s.
func (b *bench) printer(st *step) harness.Progress {
	var last time.Time
	return func(format string, args ...any) {
		if time.Since(last) < 10*time.Second {
			return
		}
		last = time.Now()
		progress("  %6.1fs %s", time.Since(st.start).Seconds(), fmt.Sprintf(format, args...))
	}
}

func deadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Hour)
}
