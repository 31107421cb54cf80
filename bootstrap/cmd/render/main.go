// Command render prints the exact user data a WindowsConfig (or WindowsConfigTemplate) yields,
// offline, with the join parameters given as flags. Use it to review what reaches a node.
//
//	render -f windowsconfig.yaml --api-server 10.0.0.10:6443 \
//	    --token abcdef.0123456789abcdef --ca-file ca.crt --kubernetes-version v1.36.3 \
//	    [--format cloud-config|powershell] [--gzip] [--node-name N]
//
// `render diagnostics MACHINE` prints a Machine's whole story from the management cluster
// (docs/troubleshooting.md):
//
//	render diagnostics [--kubeconfig FILE] [-n NAMESPACE] [--events N] MACHINE
//
// `render preflight` lists the Windows workloads of a workload cluster that will not start on
// nodes of a new Windows build (docs/upgrades.md):
//
//	render preflight --target ltsc2025 [--kubeconfig FILE] [-n NAMESPACE] CLUSTER
//
// `render logs` gathers the story and the node logs of a Machine, a MachineDeployment or a Cluster
// into one archive (docs/troubleshooting.md):
//
//	render logs [--kubeconfig FILE] [-n NAMESPACE] [-o FILE] (MACHINE | --machine-deployment NAME | --cluster NAME)
//
// `render -h` lists them all; `render version` prints the version. make release ships render for
// Linux, macOS and Windows (RELEASE.md); `go build ./bootstrap/cmd/render` builds it from here.
package main

import (
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/webhooks"
)

func main() {
	os.Exit(exitStatus(run(os.Args[1:], os.Stdout), os.Stderr))
}

// previewOptions are the flags of the user-data preview.
type previewOptions struct {
	file, name, endpoint, token, caHash, caFile string
	kubernetesVersion, nodeName, format         string
	gzip                                        bool
}

// previewFlags defines the preview's flags into o. The flag set prints nothing: run prints the
// usage (-h) on stdout and main prints the errors.
func previewFlags(o *previewOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.file, "f", "", "YAML file with a WindowsConfig or WindowsConfigTemplate, alone or among other objects (e.g. a generated cluster) (required)")
	fs.StringVar(&o.name, "name", "", "the WindowsConfig or WindowsConfigTemplate to use when the file holds several")
	fs.StringVar(&o.endpoint, "api-server", "", "control plane endpoint host:port (required)")
	fs.StringVar(&o.token, "token", "abcdef.0123456789abcdef", "bootstrap token")
	fs.StringVar(&o.caHash, "ca-hash", "", "CA public key pin sha256:<hex>; or use --ca-file")
	fs.StringVar(&o.caFile, "ca-file", "", "PEM CA certificate to compute the pin from")
	fs.StringVar(&o.kubernetesVersion, "kubernetes-version", "v1.36.3", "Kubernetes version of the Machine")
	fs.StringVar(&o.nodeName, "node-name", "", "override spec.nodeRegistration.name")
	fs.StringVar(&o.format, "format", "", "override spec.format: cloud-config or powershell")
	fs.BoolVar(&o.gzip, "gzip", false, "gzip the output (as capwin stores it in guestinfo.userdata)")
	return fs
}

// run runs one command line. -h, --help and help print the usage on stdout and return
// flag.ErrHelp (exit status 0).
func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errNoArgs
	}
	switch args[0] {
	case "diagnostics":
		return runDiagnostics(args[1:], stdout)
	case "preflight":
		return runPreflight(args[1:], stdout)
	case "logs":
		return runLogs(args[1:], stdout)
	case "image-check":
		return runImageCheck(args[1:], stdout)
	case "version":
		if len(args) > 1 {
			return fmt.Errorf("version takes no arguments, got %q", args[1:])
		}
		_, err := fmt.Fprintln(stdout, "render", versionString())
		return err
	case "help":
		if err := printUsage(stdout); err != nil {
			return err
		}
		return flag.ErrHelp
	}
	o := &previewOptions{}
	fs := previewFlags(o)
	if err := fs.Parse(args); err != nil {
		return flagError(err, stdout, printUsage, "render -h")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (commands: diagnostics, preflight, logs, image-check, version, help; render -h for usage)", fs.Arg(0))
	}
	if o.file == "" || o.endpoint == "" {
		return errors.New("-f and --api-server are required (render -h for usage)")
	}
	obj, spec, err := readSpec(o.file, o.name, notices)
	if err != nil {
		return err
	}
	if o.nodeName != "" {
		spec.NodeRegistration.Name = o.nodeName
	}
	if o.format != "" {
		spec.Format = bootstrapv1.Format(o.format)
	}
	if errs := admit(obj, spec); len(errs) > 0 {
		return fmt.Errorf("%s is invalid: %w", o.file, errs.ToAggregate())
	}
	if msg := windowsconfig.KubeletFlagRefusal(spec, o.kubernetesVersion); msg != "" {
		return fmt.Errorf("%s for Kubernetes %s: %s", o.file, o.kubernetesVersion, msg)
	}
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			return err
		}
		if o.caHash, err = windowsconfig.CACertHash(pem); err != nil {
			return err
		}
	}
	if o.caHash == "" {
		return errors.New("one of --ca-hash or --ca-file is required")
	}
	files := make([]string, len(spec.Files))
	for i, f := range spec.Files {
		if f.ContentFrom != nil {
			files[i] = fmt.Sprintf("<content of Secret %s key %s>", f.ContentFrom.Secret.Name, f.ContentFrom.Secret.Key)
		}
	}
	in := windowsconfig.BuildInput(spec, windowsconfig.JoinParams{
		Endpoint: o.endpoint, Token: o.token, CAHash: o.caHash, KubernetesVersion: o.kubernetesVersion, Files: files,
		Registries: windowsconfig.PlaceholderRefs(spec.Containerd.Registries),
	})
	out, err := userdata.Render(in)
	if err != nil {
		return err
	}
	if !o.gzip {
		_, err = stdout.Write(out)
		return err
	}
	w := gzip.NewWriter(stdout)
	if _, err := w.Write(out); err != nil {
		return err
	}
	return w.Close()
}

// admit applies the same defaults and checks as admission (the CRD's schema and CEL rules, then
// the webhook) to obj, whose spec is spec, so what renders here is what a cluster accepts.
func admit(obj runtime.Object, spec *bootstrapv1.WindowsConfigSpec) field.ErrorList {
	webhooks.DefaultSpec(spec)
	if errs := validateSchema(obj); len(errs) > 0 {
		return errs
	}
	return webhooks.ValidateSpec(spec, field.NewPath("spec"))
}
