package harness

import (
	"context"
	"fmt"
	"time"
)

// Result is the demo's one-line JSON summary.
type Result struct {
	Provider                  string         `json:"provider"`
	MachinesReady             int            `json:"machines_ready"`
	NodesWindowsBuild         map[string]int `json:"nodes_windows_build"`
	CreateSeconds             float64        `json:"create_seconds"`
	RolloutSeconds            float64        `json:"rollout_seconds"`
	MinAvailableDuringRollout int            `json:"min_available_during_rollout"`
	LeakedVMs                 int            `json:"leaked_vms"`
	Errors                    []string       `json:"errors"`
}

// DemoOptions sizes the demo.
type DemoOptions struct {
	Replicas, ScaleTo int32
	// Timeout bounds each step.
	Timeout time.Duration
}

const (
	demoWorkers = "win-workers"
	demoApp     = "web"
)

// RunDemo runs create -> scale -> blue/green OS upgrade -> delete on a started harness, as a
// user of Cluster API would, and fills r as it goes (r.Errors gets the failure, if any).
func RunDemo(ctx context.Context, h *Harness, o DemoOptions, p Progress, r *Result) error {
	r.Provider, r.MinAvailableDuringRollout, r.NodesWindowsBuild = h.Provider(), -1, map[string]int{}
	err := runDemo(ctx, h, o, p, r)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
	}
	if s, serr := h.Snapshot(ctx); serr == nil {
		r.LeakedVMs = s.VMs
	}
	return err
}

func runDemo(ctx context.Context, h *Harness, o DemoOptions, p Progress, r *Result) error {
	n := int(o.Replicas)
	p("Creating Cluster %s/%s (%s) and MachineDeployment %s: %d × Windows Server 2022 (ltsc2022)", Namespace, ClusterName, h.Provider(), demoWorkers, n)
	start := time.Now()
	if err := h.CreateCluster(ctx); err != nil {
		return err
	}
	if err := h.CreateWorkers(ctx, Workers{Name: demoWorkers, Image: "ltsc2022", Replicas: o.Replicas, MaxSurge: 1, HyperVIsolation: true}); err != nil {
		return err
	}
	s, err := h.WaitWorkers(ctx, "create", n, "ltsc2022", o.Timeout, p)
	if err != nil {
		return err
	}
	r.CreateSeconds = round(time.Since(start))
	r.MachinesReady, r.NodesWindowsBuild = s.MachinesReady, s.NodesReady
	p("%d Windows nodes Ready on %s in %.1fs", n, Build("ltsc2022"), r.CreateSeconds)

	minAvailable := o.Replicas - 1
	p("Deploying app %s/%s: %d IIS pods (Hyper-V isolated, so they run on 2022 and 2025 hosts), PodDisruptionBudget minAvailable %d", AppNamespace, demoApp, n, minAvailable)
	if err := h.DeployApp(ctx, App{Name: demoApp, Replicas: o.Replicas, MinAvailable: minAvailable, HyperVIsolation: true,
		Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}); err != nil {
		return err
	}
	if err := h.WaitApp(ctx, demoApp, n, o.Timeout); err != nil {
		return err
	}
	for _, to := range []int32{o.ScaleTo, o.Replicas} {
		p("Scaling %s to %d", demoWorkers, to)
		if err := h.ScaleWorkers(ctx, demoWorkers, to); err != nil {
			return err
		}
		if _, err := h.WaitWorkers(ctx, fmt.Sprintf("scale to %d", to), int(to), "ltsc2022", o.Timeout, p); err != nil {
			return err
		}
	}
	if err := h.WaitApp(ctx, demoApp, n, o.Timeout); err != nil {
		return err
	}

	p("Blue/green OS upgrade: %s -> Windows Server 2025 (ltsc2025), maxSurge 1, maxUnavailable 0", demoWorkers)
	start = time.Now()
	avail := h.TrackAvailability(ctx, demoApp, 100*time.Millisecond)
	err = h.SetWorkersImage(ctx, demoWorkers, "ltsc2025")
	if err == nil {
		s, err = h.WaitWorkers(ctx, "rollout", n, "ltsc2025", o.Timeout, p)
	}
	if err == nil {
		err = h.WaitApp(ctx, demoApp, n, o.Timeout)
	}
	r.MinAvailableDuringRollout = avail.Stop()
	if err != nil {
		return err
	}
	r.RolloutSeconds = round(time.Since(start))
	r.MachinesReady, r.NodesWindowsBuild = s.MachinesReady, s.NodesReady
	p("Rolled out in %.1fs; fewest app pods available during the rollout: %d (PDB minAvailable %d)", r.RolloutSeconds, r.MinAvailableDuringRollout, minAvailable)
	if r.MinAvailableDuringRollout < int(minAvailable) {
		return fmt.Errorf("the PodDisruptionBudget was violated: %d pods available, minAvailable %d", r.MinAvailableDuringRollout, minAvailable)
	}

	p("Deleting Cluster %s/%s", Namespace, ClusterName)
	s, err = h.DeleteCluster(ctx, o.Timeout, p)
	if err != nil {
		return err
	}
	p("Cluster deleted: %d VMs, %d disks/config drives, %d bootstrap tokens left", s.VMs, s.Files, s.Tokens)
	return nil
}

func round(d time.Duration) float64 {
	return float64(d.Round(100*time.Millisecond)) / float64(time.Second)
}
