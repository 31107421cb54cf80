package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/capwin/capwin/internal/nodelogs"
)

const logsUsage = "usage: render logs [--kubeconfig FILE] [-n NAMESPACE] [-o FILE] [--guest auto|always|never] [--guest-credentials SECRET] " +
	"(MACHINE | --machine-deployment NAME | --cluster NAME)"

type logsOptions struct {
	kubeconfig, namespace, out string
	deployment, cluster        string
	guest, guestCredentials    string
	guestTimeout               time.Duration
}

// logsFlags defines the flags of render logs. The flag set prints nothing, as the preview's.
func logsFlags(o *logsOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("render logs", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	managementFlags(fs, &o.kubeconfig, &o.namespace, "Machines")
	fs.StringVar(&o.out, "o", "", "the archive to write (default: capwin-logs-<name>-<time>.tar.gz in the current folder; - for stdout)")
	fs.StringVar(&o.deployment, "machine-deployment", "", "gather every Machine of this MachineDeployment")
	fs.StringVar(&o.cluster, "cluster", "", "gather every Machine of this Cluster")
	fs.StringVar(&o.guest, "guest", nodelogs.GuestAuto, "collect in the guest through the hypervisor: auto (Machines whose node logs "+
		"Node Log Query cannot read, such as those that never joined), always, never")
	fs.StringVar(&o.guestCredentials, "guest-credentials", "", "a Secret of the namespace with the username and password of a guest "+
		"administrator (default: each machine's spec.guestCredentialsRef)")
	fs.DurationVar(&o.guestTimeout, "guest-timeout", 5*time.Minute, "how long to wait for the infrastructure manager's answers")
	return fs
}

func printLogsUsage(w io.Writer) error {
	return writeUsage(w, logsUsage, `Gathers into one .tar.gz what diagnosing Windows nodes needs, from the management cluster: for
each Machine its story (as render diagnostics prints it, with the guest's bootstrap report) and,
when its Node is up, the node's logs through Node Log Query (kubectl get --raw
/api/v1/nodes/NODE/proxy/logs/): capwin's bootstrap log, the kubelet's (rotated files too),
containerd's, and the kube-proxy and CNI pods' logs. For a Machine whose node Node Log Query
cannot read (one that never joined), it asks capwin's infrastructure manager to collect in the
guest through the hypervisor's guest channel (VMware Tools, Hyper-V PowerShell Direct), with a
guest administrator's login: the log folders, cloudbase-init's log, the System and Application
event logs, hnsdiag and the services, adapters and volumes. notes.txt in a Machine's folder says
what could not be gathered and why. The archive holds no credentials.

`, logsFlags(&logsOptions{}))
}

// runLogs writes the archive of a Machine, a MachineDeployment or a Cluster and prints a summary.
func runLogs(args []string, stdout io.Writer) error {
	o := &logsOptions{}
	fs := logsFlags(o)
	if err := fs.Parse(args); err != nil {
		return flagError(err, stdout, printLogsUsage, "render logs -h")
	}
	machine := fs.Arg(0)
	if err := fs.Parse(fs.Args()[min(1, fs.NArg()):]); err != nil { // flags after the name
		return flagError(err, stdout, printLogsUsage, "render logs -h")
	}
	t, err := logsTarget(machine, o, fs.NArg())
	if err != nil {
		return err
	}
	if o.guest != nodelogs.GuestAuto && o.guest != nodelogs.GuestAlways && o.guest != nodelogs.GuestNever {
		return fmt.Errorf("--guest %q: give auto, always or never", o.guest)
	}
	c, namespace, err := management(o.kubeconfig, o.namespace)
	if err != nil {
		return err
	}
	t.Namespace = namespace
	now := time.Now()
	if o.out == "" {
		o.out = fmt.Sprintf("capwin-logs-%s-%s.tar.gz", t.Name, now.UTC().Format("20060102-150405"))
	}
	w := stdout
	summary := stdout
	if o.out != "-" {
		f, err := os.OpenFile(o.out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		w = f
	} else {
		summary = io.Discard
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute+o.guestTimeout)
	defer cancel()
	res, err := nodelogs.Gather(ctx, c, t, nodelogs.Options{Now: func() time.Time { return now }, Guest: o.guest,
		GuestCredentials: o.guestCredentials, GuestTimeout: o.guestTimeout}, w)
	if err != nil {
		if o.out != "-" {
			_ = os.Remove(o.out) // no half-written archive is left behind
		}
		return err
	}
	for _, m := range res.Machines {
		_, _ = io.WriteString(summary, m.Summary())
		for _, n := range m.Notes {
			_, _ = fmt.Fprintf(summary, "\n  %s", n)
		}
		_, _ = fmt.Fprintln(summary)
	}
	if o.out != "-" {
		_, err = fmt.Fprintln(summary, "wrote", o.out)
	}
	return err
}

// logsTarget is the one thing named: a Machine argument, or one of the flags.
func logsTarget(machine string, o *logsOptions, extra int) (nodelogs.Target, error) {
	var targets []nodelogs.Target
	if machine != "" {
		targets = append(targets, nodelogs.Target{Kind: nodelogs.Machine, Name: machine})
	}
	if o.deployment != "" {
		targets = append(targets, nodelogs.Target{Kind: nodelogs.MachineDeployment, Name: o.deployment})
	}
	if o.cluster != "" {
		targets = append(targets, nodelogs.Target{Kind: nodelogs.Cluster, Name: o.cluster})
	}
	if len(targets) != 1 || extra > 0 {
		return nodelogs.Target{}, errors.New(logsUsage + " (name exactly one; render logs -h for the flags)")
	}
	return targets[0], nil
}
