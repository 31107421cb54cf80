package gmsa

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/test/envtest"
)

// deploy is the test copy of windows-gmsa v0.13.0's admission-webhook/deploy directory.
const deploy = "testdata/v0.13.0/admission-webhook/deploy"

// TestInstall installs windows-gmsa v0.13.0 on a real kube-apiserver, the deploy files served
// over HTTP: a wrong checksum applies nothing; the right one installs the CRD and the webhook with
// a serving certificate that is its own CA bundle and names the Service, drops the installer's
// cluster-admin binding, and a second run keeps the certificate. Then the example's objects are
// applied (the credential spec for real, the rest as a dry run).
func TestInstall(t *testing.T) {
	g := NewWithT(t)
	g.Expect(fileSHA256(t, crdFile)).To(Equal(Pinned.CRDSHA256), "the test copy is the pinned release")
	g.Expect(fileSHA256(t, webhookFile)).To(Equal(Pinned.WebhookSHA256))
	env, err := envtest.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(env.Config, client.Options{Scheme: scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()
	binding := &rbacv1.ClusterRoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "gmsa-install", Namespace: Namespace}},
	}
	binding.Name = InstallBinding
	g.Expect(c.Create(ctx, binding)).To(Succeed())

	srv := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(srv.Close)
	var log bytes.Buffer
	o := Pinned
	o.ManifestsURL, o.WebhookImage = srv.URL+"/", "mirror.example.com/gmsa-webhook:v0.13.0"
	o.Interval, o.Timeout, o.Log = 100*time.Millisecond, time.Minute, &log

	wrong := o
	wrong.CRDSHA256 = sha256Hex([]byte("not the CRD"))
	err = Install(ctx, env.Config, wrong)
	g.Expect(err).To(MatchError("refusing " + srv.URL + "/v0.13.0/admission-webhook/deploy/gmsa-crd.yml: SHA-256 " +
		fileSHA256(t, crdFile) + ", pinned " + wrong.CRDSHA256 + " (GMSA_VERSION v0.13.0)"))
	err = c.Get(ctx, client.ObjectKey{Name: CRDName}, &apiextensionsv1.CustomResourceDefinition{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing applied: %v", err)

	var firstCert []byte
	for run := range 2 {
		done := make(chan struct{})
		go markAvailable(ctx, c, done)
		err = Install(ctx, env.Config, o)
		close(done)
		g.Expect(err).NotTo(HaveOccurred(), log.String())
		g.Expect(log.String()).To(ContainSubstring("gMSA webhook v0.13.0 installed."))
		cert := checkWebhook(t, c)
		if run == 0 {
			firstCert = cert
		}
		g.Expect(cert).To(Equal(firstCert), "a second run keeps the certificate")
		err = c.Get(ctx, client.ObjectKeyFromObject(binding), &rbacv1.ClusterRoleBinding{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the installer's cluster-admin binding is gone: %v", err)
	}
	g.Expect(log.String()).To(ContainSubstring("keeping the serving certificate of Secret gmsa-system/gmsa-webhook"))
	applyExample(t, c)
}

// checkWebhook checks what Install installed and returns the serving certificate (PEM).
func checkWebhook(t *testing.T, c client.Client) []byte {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: Name}, secret)).To(Succeed())
	cert := secret.Data[certKey]
	g.Expect(secret.Data[keyKey]).To(ContainSubstring("PRIVATE KEY"))
	block, _ := pem.Decode(cert)
	g.Expect(block).NotTo(BeNil())
	parsed, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cert)
	_, err = parsed.Verify(x509.VerifyOptions{Roots: pool, DNSName: "gmsa-webhook.gmsa-system.svc"})
	g.Expect(err).NotTo(HaveOccurred(), "the API server verifies the webhook with its caBundle")

	validating := &admissionv1.ValidatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: Name}, validating)).To(Succeed())
	mutating := &admissionv1.MutatingWebhookConfiguration{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: Name}, mutating)).To(Succeed())
	g.Expect(validating.Webhooks[0].ClientConfig.CABundle).To(Equal(cert))
	g.Expect(mutating.Webhooks[0].ClientConfig.CABundle).To(Equal(cert))

	ns := &corev1.Namespace{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: Namespace}, ns)).To(Succeed())
	g.Expect(ns.Labels).To(HaveKeyWithValue("gmsa-webhook", "disabled"), "the webhook never blocks its own pods")
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "gmsa-system-gmsa-webhook-binding-to-gmsa-system-gmsa-webhook-rbac-role"},
		&rbacv1.ClusterRoleBinding{})).To(Succeed())
	d := &appsv1.Deployment{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: Name}, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal("mirror.example.com/gmsa-webhook:v0.13.0"))
	g.Expect(d.Spec.Template.Spec.Tolerations).To(ContainElement(corev1.Toleration{
		Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}))
	return cert
}

// markAvailable plays the Deployment controller, which envtest lacks: it reports the webhook's
// Deployment rolled out.
func markAvailable(ctx context.Context, c client.Client, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-time.After(200 * time.Millisecond):
		}
		d := &appsv1.Deployment{}
		if c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: Name}, d) != nil {
			continue
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
		_ = c.Status().Update(ctx, d)
	}
}

// applyExample applies docs/examples/gmsa-credentialspec.yaml: the namespace and the credential
// spec for real (the CRD's schema accepts it), the RBAC and the workload as a dry run.
func applyExample(t *testing.T, c client.Client) {
	t.Helper()
	g := NewWithT(t)
	text, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "docs", "examples", "gmsa-credentialspec.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := objects(text)
	g.Expect(err).NotTo(HaveOccurred())
	kinds := map[string]int{}
	for _, u := range objs {
		kinds[u.GetKind()]++
		opts := []client.ApplyOption{client.FieldOwner("gmsa-test"), client.ForceOwnership}
		if kind := u.GetKind(); kind != "Namespace" && kind != "GMSACredentialSpec" {
			opts = append(opts, client.DryRunAll)
		}
		g.Expect(c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), opts...)).
			To(Succeed(), "%s %s", u.GetKind(), u.GetName())
		if u.GetKind() == "Deployment" {
			name, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "securityContext", "windowsOptions", "gmsaCredentialSpecName")
			g.Expect(name).To(Equal("webapp01"))
		}
	}
	g.Expect(kinds).To(Equal(map[string]int{"GMSACredentialSpec": 1, "ClusterRole": 1, "Namespace": 1,
		"ServiceAccount": 1, "RoleBinding": 1, "Deployment": 1}))
}

func fileSHA256(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deploy, name))
	if err != nil {
		t.Fatal(err)
	}
	return sha256Hex(b)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
