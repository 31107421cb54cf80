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

// runDiagnostics prints one Machine's story (a Machine, VCenterMachine or HyperVMachine name) from
// the management cluster of --kubeconfig (default: $KUBECONFIG, ~/.kube/config).
func runDiagnostics(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("render diagnostics", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG or ~/.kube/config)")
	namespace := fs.String("n", "", "namespace of the Machine (default: the kubeconfig context's)")
	fs.StringVar(namespace, "namespace", "", "same as -n")
	maxEvents := fs.Int("events", 20, "how many of the latest events to print")
	if err := fs.Parse(args); err != nil {
		return err
	}
	name := fs.Arg(0)
	if err := fs.Parse(fs.Args()[min(1, fs.NArg()):]); err != nil { // flags after the name
		return err
	}
	if name == "" || fs.NArg() > 0 {
		return errors.New(diagnosticsUsage)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return err
	}
	if *namespace == "" {
		if *namespace, _, err = cc.Namespace(); err != nil {
			return err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: diagnostics.Scheme()})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	story, err := diagnostics.Collect(ctx, c, *namespace, name)
	if err != nil {
		return err
	}
	return diagnostics.Write(stdout, story, *maxEvents)
}
