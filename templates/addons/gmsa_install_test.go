package addons

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/test/envtest"
)

// gmsaRun runs install-gmsa.sh with kubectl against a kubeconfig, the manifests served by url.
type gmsaRun struct {
	kubeconfig, url, script, webhookSHA string
}

func (r gmsaRun) run(crdSHA string) (string, error) {
	cmd := exec.Command("bash", r.script)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+r.kubeconfig, "HOME="+filepath.Dir(r.kubeconfig),
		"GMSA_VERSION=v0.13.0", "GMSA_MANIFESTS_URL="+r.url+"/",
		"GMSA_CRD_SHA256="+crdSHA, "GMSA_WEBHOOK_SHA256="+r.webhookSHA,
		"GMSA_WEBHOOK_IMAGE=mirror.example.com/gmsa-webhook:v0.13.0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestGMSAInstallScript runs the install script on a real kube-apiserver with the v0.13.0 deploy
// files served over HTTP: a wrong checksum applies nothing; the right one installs the CRD and
// the webhook with a serving certificate that is its own CA bundle and names the Service, and a
// second run keeps that certificate. Then the example's objects are applied (the credential spec
// for real, the rest as a dry run).
func TestGMSAInstallScript(t *testing.T) {
	for _, tool := range []string{"bash", "kubectl", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	g := NewWithT(t)
	env, err := envtest.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	withCRDs := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(withCRDs)).To(Succeed())
	g.Expect(apiextensionsv1.AddToScheme(withCRDs)).To(Succeed())
	c, err := client.New(env.Config, client.Options{Scheme: withCRDs})
	g.Expect(err).NotTo(HaveOccurred())

	srv := httptest.NewServer(http.FileServer(http.Dir("testdata/windows-gmsa")))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	script := filepath.Join(dir, "install-gmsa.sh")
	g.Expect(os.WriteFile(script, scriptFile(t, "install-gmsa.sh"), 0o600)).To(Succeed())
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())
	r := gmsaRun{kubeconfig: kubeconfig, url: srv.URL, script: script, webhookSHA: fileSHA256(t, "gmsa-webhook.yml.tpl")}
	ctx := context.Background()

	out, err := r.run(sha256Hex([]byte("not the CRD")))
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("refusing " + srv.URL + "/v0.13.0/admission-webhook/deploy/gmsa-crd.yml: SHA-256 " + fileSHA256(t, "gmsa-crd.yml")))
	err = c.Get(ctx, client.ObjectKey{Name: "gmsacredentialspecs.windows.k8s.io"}, &apiextensionsv1.CustomResourceDefinition{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing applied: %v", err)

	var firstCert []byte
	for run := range 2 {
		done := make(chan struct{})
		go markAvailable(ctx, c, done)
		out, err = r.run(fileSHA256(t, "gmsa-crd.yml"))
		close(done)
		g.Expect(err).NotTo(HaveOccurred(), out)
		g.Expect(out).To(ContainSubstring("gMSA webhook v0.13.0 installed."))

		cert := checkWebhook(t, c)
		if run == 0 {
			firstCert = cert
		}
		g.Expect(cert).To(Equal(firstCert), "a second run keeps the certificate")
	}
	applyExample(t, c)
}

// checkWebhook checks what the script installed and returns the serving certificate (PEM).
func checkWebhook(t *testing.T, c client.Client) []byte {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "gmsa-system", Name: "gmsa-webhook"}, secret)).To(Succeed())
	cert := secret.Data["tls_certificate"]
	g.Expect(secret.Data["tls_private_key"]).To(ContainSubstring("PRIVATE KEY"))
	block, _ := pem.Decode(cert)
	g.Expect(block).NotTo(BeNil())
	parsed, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cert)
	_, err = parsed.Verify(x509.VerifyOptions{Roots: pool, DNSName: "gmsa-webhook.gmsa-system.svc"})
	g.Expect(err).NotTo(HaveOccurred(), "the API server verifies the webhook with its caBundle")

	validating := &admissionv1.ValidatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "gmsa-webhook"}, validating)).To(Succeed())
	mutating := &admissionv1.MutatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "gmsa-webhook"}, mutating)).To(Succeed())
	g.Expect(validating.Webhooks[0].ClientConfig.CABundle).To(Equal(cert))
	g.Expect(mutating.Webhooks[0].ClientConfig.CABundle).To(Equal(cert))

	d := &appsv1.Deployment{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "gmsa-system", Name: "gmsa-webhook"}, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("mirror.example.com/gmsa-webhook:v0.13.0"))
	g.Expect(d.Spec.Template.Spec.Tolerations).To(ContainElement(corev1.Toleration{
		Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}))
	return cert
}

// markAvailable plays the Deployment controller, which envtest lacks: it reports the webhook's
// Deployment rolled out, so that kubectl rollout status returns.
func markAvailable(ctx context.Context, c client.Client, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-time.After(200 * time.Millisecond):
		}
		d := &appsv1.Deployment{}
		if c.Get(ctx, client.ObjectKey{Namespace: "gmsa-system", Name: "gmsa-webhook"}, d) != nil {
			continue
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
		_ = c.Status().Update(ctx, d)
	}
}

// applyExample applies docs/examples/gmsa-credentialspec.yaml: the credential spec and the
// namespace for real (the CRD's schema accepts the spec), the RBAC and the workload as a dry run.
func applyExample(t *testing.T, c client.Client) {
	t.Helper()
	g := NewWithT(t)
	text, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "docs", "examples", "gmsa-credentialspec.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	objs := decode(t, text)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.u.GetKind()]++
		opts := []client.ApplyOption{client.FieldOwner("addons-test"), client.ForceOwnership}
		if kind := o.u.GetKind(); kind != "Namespace" && kind != "GMSACredentialSpec" {
			opts = append(opts, client.DryRunAll)
		}
		g.Expect(c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o.u), opts...)).
			To(Succeed(), "%s %s", o.u.GetKind(), o.u.GetName())
	}
	g.Expect(kinds).To(Equal(map[string]int{"GMSACredentialSpec": 1, "ClusterRole": 1, "Namespace": 1,
		"ServiceAccount": 1, "RoleBinding": 1, "Deployment": 1}))
	for _, o := range objs {
		if d, ok := o.typed.(*appsv1.Deployment); ok {
			g.Expect(*d.Spec.Template.Spec.SecurityContext.WindowsOptions.GMSACredentialSpecName).To(Equal("webapp01"))
		}
	}
}
