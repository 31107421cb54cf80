// Command addoninstaller is the image capwin-addon-installer: the one-shot Jobs of capwin's
// workload-cluster addons that come from an upstream release run it, so that they need no shell
// tools (curl, openssl) in their image.
//
//	capwin-addon-installer gmsa
//
// installs the Windows gMSA admission webhook and its CRD (package gmsa), configured by the
// environment: GMSA_VERSION, GMSA_MANIFESTS_URL, GMSA_CRD_SHA256, GMSA_WEBHOOK_SHA256 and
// GMSA_WEBHOOK_IMAGE. It reaches the API server in-cluster (KUBERNETES_SERVICE_HOST/PORT and the
// pod's ServiceAccount) or through KUBECONFIG.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/capwin/capwin/addoninstaller/gmsa"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] != "gmsa" {
		fmt.Fprintln(os.Stderr, "usage: capwin-addon-installer gmsa")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gmsa:", err)
		stop()
		os.Exit(1) // stop is called above: os.Exit skips deferred calls
	}
}

func run(ctx context.Context) error {
	cfg, err := config.GetConfig()
	if err != nil {
		return fmt.Errorf("reaching the API server: %w", err)
	}
	return gmsa.Install(ctx, cfg, optionsFromEnv(os.Getenv))
}

// optionsFromEnv reads the Job's environment.
func optionsFromEnv(getenv func(string) string) gmsa.Options {
	return gmsa.Options{
		Version:       getenv("GMSA_VERSION"),
		ManifestsURL:  getenv("GMSA_MANIFESTS_URL"),
		CRDSHA256:     getenv("GMSA_CRD_SHA256"),
		WebhookSHA256: getenv("GMSA_WEBHOOK_SHA256"),
		WebhookImage:  getenv("GMSA_WEBHOOK_IMAGE"),
		Log:           os.Stdout,
	}
}
