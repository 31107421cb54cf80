// Command demo is `make demo`: capwin's whole flow on the local harness (test/framework/harness) — a real
// management cluster with CAPI's own controllers and capwin's providers, a real workload cluster,
// vcsim (or three simulated Hyper-V hosts) and simulated Windows guests. It creates a Windows
// MachineDeployment, scales it, upgrades it from Windows Server 2022 to 2025 blue/green under a
// PodDisruptionBudget and deletes the cluster, printing progress and ending with one JSON line.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/test/framework/harness"
)

func main() {
	provider := flag.String("provider", envOr("DEMO", harness.VCenter), "vcenter or hyperv (env DEMO)")
	replicas := flag.Int("replicas", 3, "Windows machines of the MachineDeployment")
	scaleTo := flag.Int("scale-to", 5, "replicas of the scale step (then back)")
	timeout := flag.Duration("step-timeout", 5*time.Minute, "time limit of each step")
	logDir := flag.String("log-dir", "", "controller and workload cluster logs (default: a new folder capwin-demo-* in $TMPDIR for each run)")
	flag.Parse()
	if *logDir == "" {
		dir, err := os.MkdirTemp("", "capwin-demo-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
		*logDir = dir
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := harness.Result{Provider: *provider, MinAvailableDuringRollout: -1, NodesWindowsBuild: map[string]int{}}
	err := run(ctx, *provider, *logDir, harness.DemoOptions{Replicas: int32(*replicas), ScaleTo: int32(*scaleTo), Timeout: *timeout}, &r) //nolint:gosec // G115: machine counts, far below 2^31
	if err != nil && len(r.Errors) == 0 {
		r.Errors = append(r.Errors, err.Error())
	}
	if r.Errors == nil {
		r.Errors = []string{}
	}
	line, _ := json.Marshal(r)
	fmt.Println(string(line))
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo failed: %v (logs in %s)\n", err, *logDir)
		os.Exit(1)
	}
}

func run(ctx context.Context, provider, logDir string, o harness.DemoOptions, r *harness.Result) error {
	log, logFile, err := harness.LogToFile(logDir)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	p := func(format string, args ...any) {
		fmt.Printf("%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}

	p("Starting the local environment (%s): management kube-apiserver + etcd with CAPI core and capwin's providers, workload cluster (kube-apiserver, etcd, kube-scheduler, kube-controller-manager), %s", provider, hypervisor(provider))
	begin := time.Now()
	h, err := harness.Start(ctx, harness.Options{Provider: provider, LogDir: logDir, Log: logr.Logger(log).WithName("harness"),
		Infrastructure: infrasetup.Options{PollInterval: time.Second, TaskPollInterval: 200 * time.Millisecond}})
	if err != nil {
		return err
	}
	defer func() { _ = h.Stop() }()
	p("Environment up in %.1fs (logs: %s)", time.Since(begin).Seconds(), logDir)
	return harness.RunDemo(ctx, h, o, p, r)
}

func hypervisor(provider string) string {
	if provider == harness.HyperV {
		return "three simulated Hyper-V hosts behind WinRM"
	}
	return "vcsim (vCenter simulator) with Windows Server 2022/2025 templates"
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
