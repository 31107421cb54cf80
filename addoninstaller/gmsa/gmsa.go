// Package gmsa installs the Windows gMSA admission webhook and the GMSACredentialSpec CRD of
// kubernetes-sigs/windows-gmsa in a workload cluster, for capwin's optional gmsa addon.
//
// It downloads the release's two deploy files, refuses them unless their SHA-256 equal the pinned
// ones, creates the webhook's serving certificate (self-signed; kept in the webhook's Secret, so
// a second run reuses it), fills in the upstream template, applies everything with server-side
// apply, waits for the webhook's Deployment and drops the installer's cluster-admin binding.
// Every step is idempotent: a retried Job pod simply starts over.
package gmsa

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of what the installer creates, fixed so that the addon's manifests and docs can name them.
const (
	Namespace      = "gmsa-system"
	Name           = "gmsa-webhook"
	FieldManager   = "capwin-gmsa-install"
	InstallBinding = "capwin-gmsa-install" // the Job's cluster-admin ClusterRoleBinding
	CRDName        = "gmsacredentialspecs.windows.k8s.io"
)

// Files of a release, under <ManifestsURL>/<Version>/admission-webhook/deploy/.
const (
	crdFile     = "gmsa-crd.yml"
	webhookFile = "gmsa-webhook.yml.tpl"
)

// Pinned is the release the gmsa addon's Job installs by default (templates/addons/gmsa/job.yaml):
// the tag, the SHA-256 of its two deploy files (from the repository at the tag) and the webhook's
// image of that release. The tests check the Job's defaults and the test copy of the files
// against it.
var Pinned = Options{
	Version:       "v0.13.0",
	ManifestsURL:  "https://raw.githubusercontent.com/kubernetes-sigs/windows-gmsa",
	CRDSHA256:     "752d41d00cdc429dc6aa801e5878d545a78304f0b866625c8745b64d6e368bbd",
	WebhookSHA256: "8a6c1b137ad4debcc8237780953bf832e170263e7c3cd67b8891c6d81c2aac9c",
	WebhookImage:  "registry.k8s.io/gmsa-webhook/k8s-gmsa-webhook:v0.13.0",
}

// Options of an installation; the Job sets them from its environment.
type Options struct {
	Version       string // GMSA_VERSION, a tag of kubernetes-sigs/windows-gmsa
	ManifestsURL  string // GMSA_MANIFESTS_URL, raw.githubusercontent.com/kubernetes-sigs/windows-gmsa or a mirror
	CRDSHA256     string // GMSA_CRD_SHA256 of gmsa-crd.yml
	WebhookSHA256 string // GMSA_WEBHOOK_SHA256 of gmsa-webhook.yml.tpl
	WebhookImage  string // GMSA_WEBHOOK_IMAGE

	Timeout    time.Duration // how long each step is retried; default ten minutes
	Interval   time.Duration // between attempts; default ten seconds
	HTTPClient *http.Client  // default http.DefaultClient
	Log        io.Writer     // progress; default io.Discard
	Now        func() time.Time
}

func (o *Options) defaults() error {
	var missing []string
	for name, v := range map[string]string{"GMSA_VERSION": o.Version, "GMSA_MANIFESTS_URL": o.ManifestsURL,
		"GMSA_CRD_SHA256": o.CRDSHA256, "GMSA_WEBHOOK_SHA256": o.WebhookSHA256, "GMSA_WEBHOOK_IMAGE": o.WebhookImage} {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing settings: %s", strings.Join(sorted(missing), ", "))
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Interval == 0 {
		o.Interval = 10 * time.Second
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

func (o *Options) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(o.Log, format+"\n", args...)
}

// Install installs the webhook and the CRD of o.Version into the cluster of cfg.
func Install(ctx context.Context, cfg *rest.Config, o Options) error {
	if err := o.defaults(); err != nil {
		return err
	}
	deploy := strings.TrimSuffix(o.ManifestsURL, "/") + "/" + o.Version + "/admission-webhook/deploy/"
	crd, err := fetch(ctx, &o, deploy+crdFile, o.CRDSHA256)
	if err != nil {
		return err
	}
	tpl, err := fetch(ctx, &o, deploy+webhookFile, o.WebhookSHA256)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme()})
	if err != nil {
		return err
	}
	var pair keyPair
	err = retry(ctx, &o, "reading the serving certificate", func() (err error) {
		pair, err = servingCertificate(ctx, c, &o)
		return err
	})
	if err != nil {
		return err
	}
	webhook, err := render(tpl, values(o.WebhookImage, pair))
	if err != nil {
		return fmt.Errorf("%s of %s: %w", webhookFile, o.Version, err)
	}
	o.logf("applying %s and the webhook of %s", crdFile, o.Version)
	if err := retry(ctx, &o, "applying "+crdFile, func() error { return apply(ctx, c, crd) }); err != nil {
		return err
	}
	if err := retry(ctx, &o, "waiting for CRD "+CRDName, func() error { return established(ctx, c) }); err != nil {
		return err
	}
	if err := retry(ctx, &o, "applying "+webhookFile, func() error { return apply(ctx, c, webhook) }); err != nil {
		return err
	}
	if err := retry(ctx, &o, "waiting for Deployment "+Namespace+"/"+Name, func() error { return available(ctx, c) }); err != nil {
		return err
	}
	// Nothing needs cluster-admin any more.
	if err := retry(ctx, &o, "deleting ClusterRoleBinding "+InstallBinding, func() error { return dropBinding(ctx, c) }); err != nil {
		return err
	}
	o.logf("gMSA webhook %s installed.", o.Version)
	return nil
}

// permanentError ends retry at once: trying again cannot change the outcome.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// retry runs f until it succeeds, returns a permanentError, or o.Timeout passes.
func retry(ctx context.Context, o *Options, what string, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := f()
		var permanent permanentError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &permanent):
			return permanent.error
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: giving up after %d attempts: %w", what, attempt, err)
		case <-time.After(o.Interval):
			o.logf("%s (attempt %d): %v", what, attempt, err)
		}
	}
}
