package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/benchutil"
	"github.com/capwin/capwin/test/framework/harness"
)

// guestHeapKiB is one idle simulated guest's heap, as test/framework/harness/guest's scale test measures it.
const guestHeapKiB = 255

type report struct {
	cfg                config
	logDir             string
	loadStart, loadEnd string
	startup            time.Duration
	clusterReady       time.Duration
	idle               mem // after the Cluster is ready, before the first phase
	steps              []*step
	leftover           harness.Snapshot
	leftObjects        string // WindowsConfigs and infrastructure machines left in the namespace
	failure            error
	timeline           *timeline // per-machine milestones, for the breakdown
	anchor             []*anchorStep
}

// print writes the report in Markdown.
func (r *report) print(w io.Writer) error {
	b := new(strings.Builder)
	c := r.cfg
	fmt.Fprintf(b, "## capwin end to end on test/framework/harness (%s)\n\n", hypervisor(c.provider))
	fmt.Fprintf(b, "machines=%d  rollout-machines=%d  max-surge=%d  max-unavailable=0  provider=%s  GOMAXPROCS=%d  CPUs=%d\n\n",
		c.machines, c.rolloutMachines, c.maxSurge, c.provider, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(b, "- poll intervals: guest-poll-interval %s (the e2e tests use 1s, the managers default to 10s), task-poll-interval %s (as the e2e tests); harness VM watcher %s, harness state poll 200ms; guest Lease heartbeat %s\n",
		c.guestPoll, taskPollInterval, guestPoll, heartbeat)
	fmt.Fprintf(b, "- concurrency (the managers' defaults): %smachine %d, windowsconfig %d, %scluster %d, CAPI core controllers 10 each; workload-cluster clients QPS %.0f burst %d\n",
		c.provider, c.concurrency, c.concurrency, c.provider, clusterConc, clusterCache.QPS, clusterCache.Burst)
	if c.provider == harness.VCenter {
		fmt.Fprintf(b, "- vCenter watch: %s\n", map[bool]string{false: "on (the default)", true: "off (-no-vcenter-watch)"}[c.noVCenterWatch])
	} else {
		fmt.Fprintf(b, "- Hyper-V guest watch interval: %s\n", cmp.Or(c.hypervGuestWatch, hyperv.DefaultGuestWatch))
	}
	if c.guestStepTime > 0 {
		fmt.Fprintf(b, "- simulated guests: each bootstrap step takes at least %s (-guest-step-time)\n", c.guestStepTime)
	}
	fmt.Fprintf(b, "- %s\n", versions())
	fmt.Fprintf(b, "- load average (1/5/15 min): at start %s, at end %s; harness start-up %s; Cluster ready (infrastructure, control plane, remote connection) %s before the first phase; logs in %s\n\n",
		r.loadStart, r.loadEnd, dur(r.startup), dur(r.clusterReady), r.logDir)
	fmt.Fprintf(b, "Before the first phase (Cluster ready, no machine): RSS %s, Go heap in use %.0f MiB, %d goroutines.\n\n",
		r.idle.rss, r.idle.heapMiB, r.idle.goroutines)

	calls := "vSphere calls / machine"
	if c.provider == harness.HyperV {
		calls = "WinRM operations / machine"
	}
	fmt.Fprintf(b, "| phase | machines | wall time | first done | half done | peak Machines | reconciles / machine (ran) | %s | mgmt apiserver requests / machine | bootstrap tokens alive (orphaned) [data re-rendered] | RSS | peak RSS | Go heap in use | goroutines |\n", calls)
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range r.steps {
		var rec, ran float64
		for _, cs := range s.d.ctrl {
			rec += cs.reconciles
			ran += cs.ran
		}
		ops := float64(benchutil.Sum(s.d.calls))
		if c.provider == harness.HyperV {
			ops = float64(s.d.calls[winrmOps])
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %d | %.1f (%.1f) | %.1f | %.1f | %d (%d) [%d] | %s | %s | %.0f MiB | %d |\n",
			s.name, s.machines, dur(s.wall), dur(s.first), dur(s.half), s.peakMachines,
			per(rec, s), per(ran, s), per(ops, s), per(benchutil.Sum(s.d.requests), s), s.tokens.alive, len(s.tokens.orphaned), s.tokens.rerendered,
			s.mem.rss, s.mem.peakRSS, s.mem.heapMiB, s.mem.goroutines)
	}
	fmt.Fprintln(b)
	r.printRatio(b)
	r.printAnchor(b)
	r.printGuestWaits(b)
	for _, s := range r.steps {
		if strings.HasPrefix(s.name, "create") || strings.HasPrefix(s.name, "rollout") {
			printBreakdown(b, s, r.timeline)
		}
	}
	r.printControllers(b)
	for _, s := range r.steps {
		if s.detail {
			printDetail(b, s)
		}
	}
	r.printCalls(b)
	r.printWebhooks(b)
	r.printRequests(b)
	r.printNotes(b)
	if r.failure != nil {
		fmt.Fprintf(b, "\n**FAILED**: %v\n", r.failure)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *report) printRatio(b *strings.Builder) {
	var create, rollout *step
	for _, s := range r.steps {
		switch {
		case strings.HasPrefix(s.name, "rollout"):
			rollout = s
		case strings.HasPrefix(s.name, "create") && r.cfg.rolloutMachines > 0 && s.machines == r.cfg.rolloutMachines:
			create = s // the last create of M machines (phase 3)
		}
	}
	if create != nil && rollout != nil {
		fmt.Fprintf(b, "Rollout of %d machines (maxSurge %d, maxUnavailable 0): %s; bare create of the same %d: %s; rollout / create = %.2f. Peak Machines during the rollout: %d (%d + surge).\n\n",
			rollout.machines, r.cfg.maxSurge, dur(rollout.wall), create.machines, dur(create.wall),
			rollout.wall.Seconds()/create.wall.Seconds(), rollout.peakMachines, rollout.machines)
	}
	if n := len(r.steps); n > 0 && strings.HasPrefix(r.steps[n-1].name, "delete") {
		l, last := r.leftover, r.steps[n-1]
		fmt.Fprintf(b, "Left after the Cluster's deletion: %d Machines, %d VMs, %d disks/config drives, %d guests running, %s in the management cluster, %d bootstrap tokens (orphaned, i.e. referenced by no data Secret: %s); %d Nodes stay in the workload cluster (CAPI does not delete the Nodes of a Cluster being deleted: the workload cluster goes with it).\n\n",
			l.Machines, l.VMs, l.Files, last.guests, r.leftObjects, last.tokens.alive, last.tokens, l.Nodes)
	}
}

func (r *report) printNotes(b *strings.Builder) {
	guests := r.cfg.machines
	fmt.Fprintln(b, "Notes:")
	fmt.Fprintf(b, "- Memory is this one process's: CAPI core's and capwin's controllers (one manager), %s and the harness's simulated Windows guests — at the end of \"create %d\" %d of them, ≈%d KiB heap each (test/framework/harness/guest's scale test), ≈%.0f MiB. RSS and heap are an upper bound of the controllers' own memory. Peak RSS is the process's high-water mark so far. The apiservers, etcds, kube-scheduler and kube-controller-manager are child processes, not counted. Heap is measured after a GC.\n",
		hypervisor(r.cfg.provider), guests, guests, guestHeapKiB, float64(guests*guestHeapKiB)/1024)
	fmt.Fprintln(b, "- \"first done\" / \"half done\": when the first / half of the phase's machines were done (Node Ready on the target build; for a scale-down, Machine gone), from the harness's state poll (every 200ms plus the time of one poll). A phase ends when exactly the expected Machines are Ready, with as many VMs and Ready Windows Nodes of the build and no other Node (old VMs and Nodes gone).")
	fmt.Fprintln(b, "- Bootstrap tokens alive at the end of a phase, in the workload cluster; orphaned ones are referenced by no WindowsConfig data Secret (annotation "+tokenIDAnnotation+"), so neither the join nor the deletion revokes them and they live until they expire (bootstrap token TTL 15 min, then the token cleaner). [data re-rendered]: WindowsConfigs (cumulative, in the namespace) with more than one DataSecretCreated event, i.e. bootstrap data written twice, each time with a new token. The delete phase ends when the Cluster, its Machines and VMs are gone; it does not wait for such tokens.")
	fmt.Fprintln(b, "- Per machine: divided by the phase's machine count; for the rollout, per replaced machine (one created and one deleted each).")
	fmt.Fprintln(b, "- Rollout setup: the create MachineDeployment is scaled to 0 first, then a second MachineDeployment of M machines is created (bare create) and rolled out to ltsc2025, so the rollout and its baseline run on the same, otherwise empty, Cluster.")
	fmt.Fprintln(b, "- Drains: no workload pods run on the Windows Nodes, so every drain finds nothing to evict and completes in its first pass; CAPI's 20s drain requeue (when pods remain) does not come into play. CAPI's reconciler rate limit (feature gate ReconcilerRateLimiting, on by default) applies to every controller built with CAPI's builder — CAPI core's and capwin's (vcentermachine, hypervmachine, windowsconfig, the cluster and template controllers): each object is reconciled at most once per second, so task-poll-interval 200ms acts as 1s.")
	fmt.Fprintln(b, "- All controllers share one manager whose management-cluster client has envtest's limits (QPS 1000, burst 2000); in production CAPI and capwin's two managers each have their own client at QPS 20, burst 30, so client-side throttling towards the management apiserver does not show here. CAPI's ClusterCaches (CAPI core's and capwin's two) share the controller label \"clustercache\".")
	fmt.Fprintln(b, "- Management apiserver requests include the harness's few writes (Cluster, templates, MachineDeployment, scale and image patches); the harness reads Machines from the manager's cache and Nodes, Secrets and VMs from the workload apiserver and vcsim, which are not counted. In this harness CAPI reads the bootstrap, infrastructure and control plane objects it references live rather than from a cache (test/framework/harness/management/doc.go), so the GETs of windowsconfigs, vcentermachines/hypervmachines, their templates and testcontrolplanes are higher than under CAPI's own manager. Secrets are always read live (capwin's client options do not cache them).")
}

func hypervisor(provider string) string {
	if provider == harness.HyperV {
		return "three simulated Hyper-V hosts behind real WinRM, in-process"
	}
	return "vcsim in-process"
}

// versions names the CAPI, controller-runtime and Kubernetes versions built in.
func versions() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "versions unknown"
	}
	v := map[string]string{}
	for _, d := range info.Deps {
		v[d.Path] = d.Version
	}
	assets, _ := envtest.Assets()
	return fmt.Sprintf("cluster-api %s, controller-runtime %s, client-go %s, %s; kube-apiserver, etcd, kube-scheduler, kube-controller-manager from %s",
		v["sigs.k8s.io/cluster-api"], v["sigs.k8s.io/controller-runtime"], v["k8s.io/client-go"], info.GoVersion, assets)
}

func per(v float64, s *step) float64 {
	if s.machines == 0 {
		return 0
	}
	return v / float64(s.machines)
}

func dur(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return d.Round(100 * time.Millisecond).String()
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Microsecond).String()
}
