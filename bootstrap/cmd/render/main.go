// Command render prints the exact user data a WindowsConfig (or WindowsConfigTemplate) yields,
// offline, with the join parameters given as flags. Use it to review what reaches a node.
//
//	go run ./bootstrap/cmd/render -f windowsconfig.yaml --api-server 10.0.0.10:6443 \
//	    --token abcdef.0123456789abcdef --ca-file ca.crt --kubernetes-version v1.36.3
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/reconcilers/windowsconfig"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	file := fs.String("f", "", "WindowsConfig or WindowsConfigTemplate YAML file (required)")
	endpoint := fs.String("api-server", "", "control plane endpoint host:port (required)")
	token := fs.String("token", "abcdef.0123456789abcdef", "bootstrap token")
	caHash := fs.String("ca-hash", "", "CA public key pin sha256:<hex>; or use --ca-file")
	caFile := fs.String("ca-file", "", "PEM CA certificate to compute the pin from")
	version := fs.String("kubernetes-version", "v1.36.3", "Kubernetes version of the Machine")
	nodeName := fs.String("node-name", "", "override spec.nodeRegistration.name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" || *endpoint == "" {
		return errors.New("-f and --api-server are required")
	}
	spec, err := readSpec(*file)
	if err != nil {
		return err
	}
	if *nodeName != "" {
		spec.NodeRegistration.Name = *nodeName
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
	_, err = os.Stdout.Write(out)
	return err
}

// readSpec accepts either kind and returns the WindowsConfigSpec.
func readSpec(path string) (*bootstrapv1.WindowsConfigSpec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var meta struct{ Kind string }
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch meta.Kind {
	case "WindowsConfig":
		c := &bootstrapv1.WindowsConfig{}
		if err := yaml.UnmarshalStrict(raw, c); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &c.Spec, nil
	case "WindowsConfigTemplate":
		t := &bootstrapv1.WindowsConfigTemplate{}
		if err := yaml.UnmarshalStrict(raw, t); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &t.Spec.Template.Spec, nil
	}
	return nil, fmt.Errorf("%s: kind %q is neither WindowsConfig nor WindowsConfigTemplate", path, meta.Kind)
}
