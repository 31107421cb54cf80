// Command sandbox runs capwin's sandbox (test/framework/sandbox) until it gets SIGINT or SIGTERM:
// a management cluster for clusterctl init whose Deployments run as local processes, vcsim with
// the quick start's templates, and simulated guests. Once everything is ready it writes
// <dir>/env.sh and <dir>/env-hyperv.sh, the variables of the quick start for this sandbox. `make sandbox` starts it in the
// background (scripts/sandbox.sh) and `make sandbox-down` stops it.
//
//	sandbox -dir .sandbox -root .
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/go-logr/logr"

	"github.com/capwin/capwin/test/framework/localpods"
	"github.com/capwin/capwin/test/framework/sandbox"
)

func main() {
	dir := flag.String("dir", ".sandbox", "folder of the sandbox's files (kubeconfig, env.sh, logs)")
	root := flag.String("root", ".", "the capwin repository (the programs are built from it)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *dir, *root); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, root string) error {
	log := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return err
	}
	programs := filepath.Join(cache, "capwin", "localpods")
	log.Info("building the providers' managers, cert-manager and the simulators (a few minutes the first time)", "into", programs)
	o := sandbox.Options{Dir: dir, Log: log}
	if o.Programs, err = localpods.Build(ctx, root, programs); err != nil {
		return err
	}
	if o.VCSim, o.Sim, err = sandbox.BuildSimulators(ctx, root, programs); err != nil {
		return err
	}
	s, err := sandbox.Start(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		if err := s.Stop(); err != nil {
			log.Error(err, "stopping")
		}
		log.Info("stopped")
	}()
	if err := s.WriteEnv(dir); err != nil {
		return err
	}
	log.Info("ready", "env", filepath.Join(dir, "env.sh"), "vcenter", s.VCenter, "logs", s.Logs, "pods", s.Cluster.Runner.Logs())
	<-ctx.Done()
	return nil
}
