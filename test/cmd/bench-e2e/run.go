package main

import (
	"context"
	"fmt"
	"os"
	"time"

	bootstrapsetup "github.com/capwin/capwin/bootstrap/setup"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/vcsim"
)

// The settings of the run: the task poll interval as the e2e tests set it, the managers' default
// concurrency and workload-cluster client limits, and the guests' heartbeat (the guest poll
// interval is a flag).
const (
	taskPollInterval = 200 * time.Millisecond
	guestPoll        = 250 * time.Millisecond // the harness's VM watcher (its default)
	heartbeat        = 10 * time.Second
	clusterConc      = 5
)

var clusterCache = manager.ClusterCacheOptions{Concurrency: 100, QPS: 20, Burst: 30}

func run(ctx context.Context, c config) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	logDir := c.logDir
	if logDir == "" {
		dir, err := os.MkdirTemp("", "capwin-bench-e2e-")
		if err != nil {
			return err
		}
		logDir = dir
	}
	log, logFile, err := harness.LogToFile(logDir)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()

	calls := &vcsim.Calls{}
	sessions := &session.Sessions{WrapTransport: calls.Wrap}
	conns := &hyperv.Conns{GuestWatch: c.hypervGuestWatch}
	r := &report{cfg: c, logDir: logDir, loadStart: loadAverage()}
	progress("starting the harness (%s), logs in %s", c.provider, logDir)
	begin := time.Now()
	h, err := harness.Start(ctx, harness.Options{
		Provider: c.provider, LogDir: logDir, Log: log.WithName("harness"), GuestPoll: guestPoll, Heartbeat: heartbeat,
		GuestStepTime: c.guestStepTime,
		Infrastructure: infrasetup.Options{
			PollInterval: c.guestPoll, NoVCenterWatch: c.noVCenterWatch, TaskPollInterval: taskPollInterval, Sessions: sessions, Conns: conns,
			VCenterMachineConcurrency: c.concurrency, VCenterClusterConcurrency: clusterConc,
			HyperVMachineConcurrency: c.concurrency, HyperVClusterConcurrency: clusterConc,
			ClusterCache: clusterCache,
		},
		Bootstrap: bootstrapsetup.Options{WindowsConfigConcurrency: c.concurrency, ClusterCache: clusterCache},
	})
	if h != nil {
		defer func() { _ = h.Stop() }()
	}
	if err != nil {
		return err
	}
	r.startup = time.Since(begin)
	r.timeline = newTimeline()
	if err := r.timeline.start(ctx, h); err != nil {
		return err
	}
	src, err := newSources(h.Management.Env.Config, calls)
	if err != nil {
		return err
	}
	b := &bench{h: h, src: src, r: r}
	if err := b.scenario(ctx, c); err != nil {
		r.failure = err
	}
	if r.failure == nil && c.anchor && c.rolloutMachines > 0 {
		r.failure = b.anchorScenario(ctx, c)
	}
	r.loadEnd = loadAverage()
	if err := r.print(os.Stdout); err != nil && r.failure == nil {
		return err
	}
	return r.failure
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	var one, five, fifteen string
	if _, err := fmt.Sscan(string(b), &one, &five, &fifteen); err != nil {
		return "n/a"
	}
	return one + " " + five + " " + fifteen
}

// progress prints a timestamped line to stderr (the report goes to stdout).
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
