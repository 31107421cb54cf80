package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/diagnostics"
	"github.com/capwin/capwin/internal/preflight"
)

const preflightUsage = "usage: render preflight --target BUILD [--kubeconfig FILE] [-n NAMESPACE] CLUSTER | --workload-kubeconfig FILE"

type preflightOptions struct {
	kubeconfig, namespace, workloadKubeconfig, workloadNamespace string
	target, registryCA, insecure, output                         string
}

func preflightFlags(o *preflightOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("render preflight", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.target, "target", "", "Windows build of the new nodes: ltsc2025, ltsc2022, 10.0.26100 (required)")
	managementFlags(fs, &o.kubeconfig, &o.namespace, "Cluster")
	fs.StringVar(&o.workloadKubeconfig, "workload-kubeconfig", "", "kubeconfig of the workload cluster itself, instead of CLUSTER")
	fs.StringVar(&o.workloadNamespace, "workload-namespace", "", "check only this namespace of the workload cluster (default: all)")
	fs.StringVar(&o.registryCA, "registry-ca", "", "PEM file of CA certificates of private registries, trusted besides the system's")
	fs.StringVar(&o.insecure, "insecure-registry", "", "comma-separated registries (host:port) reached over plain HTTP")
	fs.StringVar(&o.output, "o", "text", "output: text or json")
	return fs
}

func printPreflightUsage(w io.Writer) error {
	return writeUsage(w, preflightUsage, `Before a Windows Server upgrade (2022 -> 2025): lists every Windows Pod template of the workload
cluster (Deployments, StatefulSets, DaemonSets, CronJobs, Jobs) that will not start on nodes of
the target build, with the fix for each. A process-isolated container needs an image for the
node's build: each image's manifest (an image index's entries included) is read from its
registry, with the template's and its ServiceAccount's pull Secrets and your docker config.
Templates with a Hyper-V isolation RuntimeClass (handler runhcs-wcow-hypervisor) run images of
the node's build or older. It reads only; the exit status is 1 when anything will not start or
could not be checked (docs/upgrades.md).

`, preflightFlags(&preflightOptions{}))
}

// errPreflight is the error of a preflight that found something; the report is on stdout.
var errPreflight = errors.New("preflight")

func runPreflight(args []string, stdout io.Writer) error {
	var o preflightOptions
	fs := preflightFlags(&o)
	if err := fs.Parse(args); err != nil {
		return flagError(err, stdout, printPreflightUsage, "render preflight -h")
	}
	cluster := fs.Arg(0)
	if err := fs.Parse(fs.Args()[min(1, fs.NArg()):]); err != nil { // flags after the name
		return flagError(err, stdout, printPreflightUsage, "render preflight -h")
	}
	if (cluster == "") == (o.workloadKubeconfig == "") || fs.NArg() > 0 {
		return errors.New(preflightUsage + " (render preflight -h for the flags)")
	}
	target, err := preflight.ParseBuild(o.target)
	if err != nil {
		return err
	}
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("-o %q: give text or json", o.output)
	}
	reg, err := registry(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	wc, err := workload(ctx, o, cluster)
	if err != nil {
		return err
	}
	report, err := preflight.Check(ctx, wc, reg, target, o.workloadNamespace)
	if err != nil {
		return err
	}
	if o.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	} else {
		err = preflight.Write(stdout, report)
	}
	if err != nil {
		return err
	}
	if blocking, unchecked := report.Blocking(); blocking+unchecked > 0 {
		return fmt.Errorf("%w against %s: %s", errPreflight, target, preflight.Summary(blocking, unchecked))
	}
	return nil
}

// registry reaches the registries with the system's roots and --registry-ca, and the docker
// config's credentials.
func registry(o preflightOptions) (*preflight.Registry, error) {
	reg := &preflight.Registry{Keychain: authn.DefaultKeychain}
	for _, h := range strings.Split(o.insecure, ",") {
		if h = strings.TrimSpace(h); h != "" {
			reg.Insecure = append(reg.Insecure, h)
		}
	}
	if o.registryCA == "" {
		return reg, nil
	}
	pem, err := os.ReadFile(o.registryCA)
	if err != nil {
		return nil, fmt.Errorf("--registry-ca: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--registry-ca %s: no PEM certificate in it", o.registryCA)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	reg.Transport = tr
	return reg, nil
}

// workload is a client of the workload cluster: from --workload-kubeconfig, or from the Cluster's
// kubeconfig Secret in the management cluster.
func workload(ctx context.Context, o preflightOptions, cluster string) (client.Client, error) {
	if o.workloadKubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", o.workloadKubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--workload-kubeconfig: %w", err)
		}
		return client.New(cfg, client.Options{Scheme: diagnostics.Scheme()})
	}
	mc, namespace, err := management(o.kubeconfig, o.namespace)
	if err != nil {
		return nil, err
	}
	return diagnostics.WorkloadClient(ctx, mc, namespace, cluster)
}
