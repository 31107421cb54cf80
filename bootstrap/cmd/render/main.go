// Command render prints the exact user data a WindowsConfig (or WindowsConfigTemplate) yields,
// offline, with the join parameters given as flags. Use it to review what reaches a node.
//
//	go run ./bootstrap/cmd/render -f windowsconfig.yaml --api-server 10.0.0.10:6443 \
//	    --token abcdef.0123456789abcdef --ca-file ca.crt --kubernetes-version v1.36.3 \
//	    [--format cloud-config|powershell] [--gzip] [--node-name N]
//
// `render diagnostics MACHINE` prints a Machine's whole story from the management cluster
// (docs/troubleshooting.md):
//
//	go run ./bootstrap/cmd/render diagnostics [--kubeconfig FILE] [-n NAMESPACE] MACHINE
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
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
	"github.com/capwin/capwin/bootstrap/webhooks"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "diagnostics" {
		return runDiagnostics(args[1:], stdout)
	}
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	file := fs.String("f", "", "WindowsConfig or WindowsConfigTemplate YAML file (required)")
	endpoint := fs.String("api-server", "", "control plane endpoint host:port (required)")
	token := fs.String("token", "abcdef.0123456789abcdef", "bootstrap token")
	caHash := fs.String("ca-hash", "", "CA public key pin sha256:<hex>; or use --ca-file")
	caFile := fs.String("ca-file", "", "PEM CA certificate to compute the pin from")
	version := fs.String("kubernetes-version", "v1.36.3", "Kubernetes version of the Machine")
	nodeName := fs.String("node-name", "", "override spec.nodeRegistration.name")
	format := fs.String("format", "", "override spec.format: cloud-config or powershell")
	gz := fs.Bool("gzip", false, "gzip the output (as capwin stores it in guestinfo.userdata)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" || *endpoint == "" {
		return errors.New("-f and --api-server are required (or: " + diagnosticsUsage + ")")
	}
	obj, spec, err := readSpec(*file)
	if err != nil {
		return err
	}
	if *nodeName != "" {
		spec.NodeRegistration.Name = *nodeName
	}
	if *format != "" {
		spec.Format = bootstrapv1.Format(*format)
	}
	if errs := admit(obj, spec); len(errs) > 0 {
		return fmt.Errorf("%s is invalid: %w", *file, errs.ToAggregate())
	}
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			return err
		}
		if *caHash, err = windowsconfig.CACertHash(pem); err != nil {
			return err
		}
	}
	if *caHash == "" {
		return errors.New("one of --ca-hash or --ca-file is required")
	}
	files := make([]string, len(spec.Files))
	for i, f := range spec.Files {
		if f.ContentFrom != nil {
			files[i] = fmt.Sprintf("<content of Secret %s key %s>", f.ContentFrom.Secret.Name, f.ContentFrom.Secret.Key)
		}
	}
	in := windowsconfig.BuildInput(spec, windowsconfig.JoinParams{
		Endpoint: *endpoint, Token: *token, CAHash: *caHash, KubernetesVersion: *version, Files: files,
	})
	out, err := userdata.Render(in)
	if err != nil {
		return err
	}
	if !*gz {
		_, err = stdout.Write(out)
		return err
	}
	w := gzip.NewWriter(stdout)
	if _, err := w.Write(out); err != nil {
		return err
	}
	return w.Close()
}

// readSpec reads a file of either kind and returns the object and its WindowsConfigSpec.
func readSpec(path string) (runtime.Object, *bootstrapv1.WindowsConfigSpec, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // G304: the file named on this command line
	if err != nil {
		return nil, nil, err
	}
	obj, spec, err := decodeSpec(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, spec, nil
}

// decodeSpec decodes YAML of either kind strictly (an unknown field is an error).
func decodeSpec(raw []byte) (runtime.Object, *bootstrapv1.WindowsConfigSpec, error) {
	var meta struct{ Kind string }
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, nil, err
	}
	switch meta.Kind {
	case "WindowsConfig":
		c := &bootstrapv1.WindowsConfig{}
		if err := yaml.UnmarshalStrict(raw, c); err != nil {
			return nil, nil, err
		}
		return c, &c.Spec, nil
	case "WindowsConfigTemplate":
		t := &bootstrapv1.WindowsConfigTemplate{}
		if err := yaml.UnmarshalStrict(raw, t); err != nil {
			return nil, nil, err
		}
		return t, &t.Spec.Template.Spec, nil
	}
	return nil, nil, fmt.Errorf("kind %q is neither WindowsConfig nor WindowsConfigTemplate", meta.Kind)
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
