package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/diagnostics"
)

const diagnosticsUsage = "usage: render diagnostics [--kubeconfig FILE] [-n NAMESPACE] [--events N] MACHINE"

// diagnosticsFlags defines the flags of render diagnostics. The flag set prints nothing, as the
// preview's.
func diagnosticsFlags(kubeconfig, namespace *string, maxEvents *int) *flag.FlagSet {
	fs := flag.NewFlagSet("render diagnostics", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	managementFlags(fs, kubeconfig, namespace, "Machine")
	fs.IntVar(maxEvents, "events", 20, "how many of the latest events to print")
	return fs
}

// printDiagnosticsUsage writes the usage of render diagnostics.
func printDiagnosticsUsage(w io.Writer) error {
	var s string
	var n int
	return writeUsage(w, diagnosticsUsage, `
Prints one Machine's story from the management cluster, in the order a join needs things: the
Machine, its VCenterMachine or HyperVMachine, the guest's bootstrap report, the WindowsConfig,
the Node in the workload cluster (or why there is none yet), the latest Events, and how to keep
the VM from remediation (docs/troubleshooting.md). MACHINE is the name of a Machine,
VCenterMachine or HyperVMachine. It only reads.`, diagnosticsFlags(&s, &s, &n))
}

// runDiagnostics prints one Machine's story (a Machine, VCenterMachine or HyperVMachine name) from
// the management cluster of --kubeconfig (default: $KUBECONFIG, ~/.kube/config).
func runDiagnostics(args []string, stdout io.Writer) error {
	var kubeconfig, namespace string
	var maxEvents int
	fs := diagnosticsFlags(&kubeconfig, &namespace, &maxEvents)
	if err := fs.Parse(args); err != nil {
		return flagError(err, stdout, printDiagnosticsUsage, "render diagnostics -h")
	}
	name := fs.Arg(0)
	if err := fs.Parse(fs.Args()[min(1, fs.NArg()):]); err != nil { // flags after the name
		return flagError(err, stdout, printDiagnosticsUsage, "render diagnostics -h")
	}
	if name == "" || fs.NArg() > 0 {
		return errors.New(diagnosticsUsage + " (render diagnostics -h for the flags)")
	}
	c, namespace, err := management(kubeconfig, namespace)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	story, err := diagnostics.Collect(ctx, c, namespace, name)
	if err != nil {
		return err
	}
	return diagnostics.Write(stdout, story, maxEvents)
}

// errNoKubeconfig replaces client-go's hint (KUBERNETES_MASTER) when no kubeconfig is found.
var errNoKubeconfig = errors.New("no kubeconfig of the management cluster: pass --kubeconfig FILE, or set KUBECONFIG, or write ~/.kube/config")

// management is a client of the management cluster of kubeconfig (default: $KUBECONFIG,
// ~/.kube/config), and namespace, or the kubeconfig context's when it is empty.
func management(kubeconfig, namespace string) (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, "", errNoKubeconfig
	}
	if err != nil {
		return nil, "", err
	}
	if namespace == "" {
		if namespace, _, err = cc.Namespace(); err != nil {
			return nil, "", err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: diagnostics.Scheme()})
	return c, namespace, err
}
