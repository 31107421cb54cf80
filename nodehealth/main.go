// Command nodehealth is the image capwin-node-health: capwin's Windows node health checker,
// run by the node health addon as a HostProcess DaemonSet on every Windows node. Every interval it
// sets the Node conditions HNSNetworkUnavailable, ContainerRuntimeUnhealthy, KubeletUnhealthy and
// SystemDiskNearlyFull (package health); the flavors' MachineHealthCheck replaces a node whose
// condition stays True.
//
//	capwin-node-health [-interval 30s] [-min-free-percent 10]
//
// It reads NODE_NAME, NETWORK_NAME and NETWORK_TYPE (the pod network's HNS network) from the
// environment and reaches the API server in-cluster (the pod's ServiceAccount) or through
// KUBECONFIG.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capwin/capwin/nodehealth/health"
)

func main() {
	interval := flag.Duration("interval", 30*time.Second, "how often the node is checked")
	minFree := flag.Float64("min-free-percent", 10, "free space of the system disk below which SystemDiskNearlyFull is True")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *interval, *minFree); err != nil {
		fmt.Fprintln(os.Stderr, "nodehealth:", err)
		stop()
		os.Exit(1) // stop is called above: os.Exit skips deferred calls
	}
}

func run(ctx context.Context, interval time.Duration, minFree float64) error {
	node := os.Getenv("NODE_NAME")
	if node == "" {
		return fmt.Errorf("NODE_NAME is not set")
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c := health.New(health.Config{Node: node, Network: os.Getenv("NETWORK_NAME"), NetworkType: os.Getenv("NETWORK_TYPE"),
		MinFreePercent: minFree}, probes(), cs)
	fmt.Fprintf(os.Stderr, "checking node %s every %s\n", node, interval)
	c.Run(ctx, interval, func(err error) { fmt.Fprintln(os.Stderr, time.Now().UTC().Format(time.RFC3339), err) })
	return nil
}
