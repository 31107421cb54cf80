/*
Copyright The capwin Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package e2e checks the cert-manager binaries and manifest produced by
// ../build.sh against a real kube-apiserver and etcd (controller-runtime's
// envtest), without containers: the three binaries run as subprocesses with
// the args of the rendered Deployments plus a kubeconfig and local ports.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
)

const (
	namespace     = "cert-manager" // where the chart installs cert-manager
	testNamespace = "e2e"
	imagePrefix   = "e2e.capwin.local/"
	webhookHost   = "cert-manager-webhook.cert-manager.svc"
)

func TestCertManager(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set; run with KUBEBUILDER_ASSETS=$(/work/main/scripts/envtest-assets.sh) (kube-apiserver and etcd binaries)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	out := buildArtifacts(t)
	objs := readManifest(t, filepath.Join(out, "cert-manager.yaml"))

	var crds []*apiextv1.CustomResourceDefinition
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" {
			crd := &apiextv1.CustomResourceDefinition{}
			fromUnstructured(t, u, crd)
			crds = append(crds, crd)
		}
	}
	if len(crds) != 6 {
		t.Fatalf("expected 6 cert-manager CRDs in the manifest, found %d", len(crds))
	}

	started := time.Now()
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions:     envtest.CRDInstallOptions{CRDs: crds},
	}
	if _, err := env.Start(); err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stopping envtest: %v", err)
		}
	})
	t.Logf("kube-apiserver + etcd up, %d CRDs installed from the manifest (%s)", len(crds), time.Since(started).Round(time.Millisecond))

	// The components get their own system:masters user via a kubeconfig, as
	// they would get a service account token in a cluster (the chart's RBAC is
	// not what is under test here).
	user, err := env.AddUser(envtest.User{Name: "cert-manager-e2e", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigBytes, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	workDir := t.TempDir()
	kubeconfig := filepath.Join(workDir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kubeconfigBytes, 0o600); err != nil {
		t.Fatal(err)
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextv1.AddToScheme(scheme))
	utilruntime.Must(cmapi.AddToScheme(scheme))
	c, err := client.New(user.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{namespace, testNamespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	// Start the three components with exactly the args of the rendered
	// Deployments ($(POD_NAMESPACE) expanded) followed by local overrides.
	args := deploymentArgs(t, objs)
	bin := func(name string) string { return filepath.Join(out, "bin", name) }
	webhookPort, webhookHealthz := freePort(t), freePort(t)
	webhook := startProcess(t, workDir, bin("cert-manager-webhook"), append(args["cert-manager-webhook"],
		"--kubeconfig="+kubeconfig,
		"--secure-port="+strconv.Itoa(webhookPort),
		"--healthz-port="+strconv.Itoa(webhookHealthz),
		"--metrics-listen-address=127.0.0.1:"+strconv.Itoa(freePort(t)),
		// The API server reaches the webhook via https://localhost:PORT.
		"--dynamic-serving-dns-names=localhost",
	))
	controllerHealthz := freePort(t)
	controller := startProcess(t, workDir, bin("cert-manager-controller"), append(args["cert-manager-controller"],
		"--kubeconfig="+kubeconfig,
		"--metrics-listen-address=127.0.0.1:"+strconv.Itoa(freePort(t)),
		"--internal-healthz-listen-address=127.0.0.1:"+strconv.Itoa(controllerHealthz),
	))
	cainjector := startProcess(t, workDir, bin("cert-manager-cainjector"), append(args["cert-manager-cainjector"],
		"--kubeconfig="+kubeconfig,
		"--metrics-listen-address=127.0.0.1:"+strconv.Itoa(freePort(t)),
	))
	procs := []*process{webhook, controller, cainjector}

	step := func(name string, timeout time.Duration, fn func(ctx context.Context) (bool, error)) {
		t.Helper()
		begin := time.Now()
		sctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var lastErr error
		err := wait.PollUntilContextCancel(sctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			for _, p := range procs {
				if err := p.exited(); err != nil {
					return false, err
				}
			}
			ok, err := fn(ctx)
			if err != nil {
				lastErr = err
			}
			return ok, nil
		})
		if err != nil {
			t.Fatalf("%s: %v (last error: %v)", name, err, lastErr)
		}
		t.Logf("ok: %s (%s)", name, time.Since(begin).Round(time.Millisecond))
	}

	step("webhook readiness probe /healthz on the healthcheck port", time.Minute, httpOK(fmt.Sprintf("http://127.0.0.1:%d/healthz", webhookHealthz)))
	step("webhook liveness probe /livez", 10*time.Second, httpOK(fmt.Sprintf("http://127.0.0.1:%d/livez", webhookHealthz)))
	step("controller liveness probe /livez on the http-healthz port", time.Minute, httpOK(fmt.Sprintf("http://127.0.0.1:%d/livez", controllerHealthz)))

	// The webhook serves TLS with a certificate for its Service DNS name,
	// signed by the CA it keeps in the Secret named by its flags.
	var webhookCA []byte
	step("webhook serves TLS for "+webhookHost+" signed by cert-manager/cert-manager-webhook-ca", 30*time.Second, func(ctx context.Context) (bool, error) {
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "cert-manager-webhook-ca"}, s); err != nil {
			return false, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(s.Data["ca.crt"]) {
			return false, errors.New("no CA certificate in the Secret yet")
		}
		conn, err := (&tls.Dialer{Config: &tls.Config{ServerName: webhookHost, RootCAs: pool, MinVersion: tls.VersionTLS12}}).
			DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", webhookPort))
		if err != nil {
			return false, err
		}
		defer conn.Close()
		leaf := conn.(*tls.Conn).ConnectionState().PeerCertificates[0]
		for _, want := range []string{"cert-manager-webhook", "cert-manager-webhook.cert-manager", webhookHost} {
			if !slices.Contains(leaf.DNSNames, want) {
				return false, fmt.Errorf("serving certificate lacks DNS name %s: %v", want, leaf.DNSNames)
			}
		}
		webhookCA = s.Data["ca.crt"]
		return true, nil
	})

	// Register the chart's webhook configurations, pointed at the local
	// process instead of the Service. Their caBundle is left empty: the
	// cainjector must fill it from the cert-manager.io/inject-ca-from-secret
	// annotation.
	for _, u := range objs {
		switch u.GetKind() {
		case "ValidatingWebhookConfiguration":
			vwc := &admissionv1.ValidatingWebhookConfiguration{}
			fromUnstructured(t, u, vwc)
			for i := range vwc.Webhooks {
				vwc.Webhooks[i].ClientConfig = localClientConfig(vwc.Webhooks[i].ClientConfig, webhookPort)
			}
			if err := c.Create(ctx, vwc); err != nil {
				t.Fatal(err)
			}
		case "MutatingWebhookConfiguration":
			mwc := &admissionv1.MutatingWebhookConfiguration{}
			fromUnstructured(t, u, mwc)
			for i := range mwc.Webhooks {
				mwc.Webhooks[i].ClientConfig = localClientConfig(mwc.Webhooks[i].ClientConfig, webhookPort)
			}
			if err := c.Create(ctx, mwc); err != nil {
				t.Fatal(err)
			}
		}
	}
	step("cainjector injects the webhook CA into the Validating- and MutatingWebhookConfiguration", time.Minute, func(ctx context.Context) (bool, error) {
		vwc := &admissionv1.ValidatingWebhookConfiguration{}
		mwc := &admissionv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: "cert-manager-webhook"}, vwc); err != nil {
			return false, err
		}
		if err := c.Get(ctx, client.ObjectKey{Name: "cert-manager-webhook"}, mwc); err != nil {
			return false, err
		}
		return bytes.Equal(vwc.Webhooks[0].ClientConfig.CABundle, webhookCA) &&
			bytes.Equal(mwc.Webhooks[0].ClientConfig.CABundle, webhookCA), nil
	})

	step("webhook admission is live (a Certificate with no identity is denied)", 30*time.Second, func(ctx context.Context) (bool, error) {
		bad := &cmapi.Certificate{
			ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "invalid"},
			Spec: cmapi.CertificateSpec{
				SecretName: "invalid",
				IssuerRef:  cmmeta.IssuerReference{Name: "whatever"},
			},
		}
		err := c.Create(ctx, bad)
		if err == nil {
			_ = c.Delete(ctx, bad)
			return false, errors.New("invalid Certificate was accepted")
		}
		if !strings.Contains(err.Error(), `admission webhook "webhook.cert-manager.io" denied the request`) {
			return false, err
		}
		t.Logf("webhook denied as expected: %v", err)
		return true, nil
	})

	// SelfSigned Issuer -> CA Certificate -> CA Issuer -> leaf Certificate,
	// which is exactly what Cluster API relies on.
	create(ctx, t, c, &cmapi.Issuer{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "selfsigned"},
		Spec:       cmapi.IssuerSpec{IssuerConfig: cmapi.IssuerConfig{SelfSigned: &cmapi.SelfSignedIssuer{}}},
	})
	create(ctx, t, c, &cmapi.Certificate{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "root-ca"},
		Spec: cmapi.CertificateSpec{
			IsCA:       true,
			CommonName: "capwin e2e root CA",
			SecretName: "root-ca",
			PrivateKey: &cmapi.CertificatePrivateKey{Algorithm: cmapi.ECDSAKeyAlgorithm, Size: 256},
			IssuerRef:  cmmeta.IssuerReference{Kind: "Issuer", Name: "selfsigned"},
		},
	})
	step("self-signed CA Certificate becomes Ready", time.Minute, certificateReady(c, "root-ca"))
	create(ctx, t, c, &cmapi.Issuer{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "ca"},
		Spec:       cmapi.IssuerSpec{IssuerConfig: cmapi.IssuerConfig{CA: &cmapi.CAIssuer{SecretName: "root-ca"}}},
	})
	step("CA Issuer becomes Ready", time.Minute, issuerReady(c, "ca"))
	leafDNS := []string{"capi-webhook-service.e2e.svc", "capi-webhook-service.e2e.svc.cluster.local"}
	create(ctx, t, c, &cmapi.Certificate{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "serving-cert"},
		Spec: cmapi.CertificateSpec{
			DNSNames:   leafDNS,
			SecretName: "serving-cert",
			IssuerRef:  cmmeta.IssuerReference{Kind: "Issuer", Name: "ca"},
		},
	})
	step("leaf Certificate from the CA Issuer becomes Ready", time.Minute, certificateReady(c, "serving-cert"))

	// The leaf Secret holds a key pair whose chain verifies against the CA.
	root, leaf := &corev1.Secret{}, &corev1.Secret{}
	get(ctx, t, c, testNamespace, "root-ca", root)
	get(ctx, t, c, testNamespace, "serving-cert", leaf)
	if !bytes.Equal(leaf.Data["ca.crt"], root.Data["tls.crt"]) {
		t.Fatalf("serving-cert ca.crt is not the root CA certificate")
	}
	if _, err := tls.X509KeyPair(leaf.Data["tls.crt"], leaf.Data["tls.key"]); err != nil {
		t.Fatalf("serving-cert tls.crt/tls.key do not form a key pair: %v", err)
	}
	rootCert := parseCert(t, root.Data["tls.crt"])
	if !rootCert.IsCA || rootCert.Subject.CommonName != "capwin e2e root CA" {
		t.Fatalf("root CA certificate is not a CA named as requested: isCA=%v subject=%s", rootCert.IsCA, rootCert.Subject)
	}
	roots := x509.NewCertPool()
	roots.AddCert(rootCert)
	leafCert := parseCert(t, leaf.Data["tls.crt"])
	for _, name := range leafDNS {
		if _, err := leafCert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Fatalf("leaf certificate does not verify for %s against the CA: %v", name, err)
		}
	}
	t.Logf("ok: leaf Secret chain verifies (subject %q, DNS %v, issuer %q)", leafCert.Subject, leafCert.DNSNames, leafCert.Issuer)

	// The mutating webhook stamped the requester's identity on the requests.
	crs := &cmapi.CertificateRequestList{}
	if err := c.List(ctx, crs, client.InNamespace(testNamespace)); err != nil {
		t.Fatal(err)
	}
	if len(crs.Items) == 0 {
		t.Fatal("no CertificateRequests found")
	}
	for _, cr := range crs.Items {
		if cr.Spec.Username == "" {
			t.Fatalf("CertificateRequest %s has no spec.username: the mutating webhook did not run", cr.Name)
		}
	}
	t.Logf("ok: %d CertificateRequests carry spec.username=%q (mutating webhook)", len(crs.Items), crs.Items[0].Spec.Username)

	// A CRD annotated with cert-manager.io/inject-ca-from gets the CA of the
	// named Certificate in its conversion webhook caBundle (CAPI's pattern).
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "widgets.e2e.capwin.local",
			Annotations: map[string]string{"cert-manager.io/inject-ca-from": testNamespace + "/serving-cert"},
		},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "e2e.capwin.local",
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
			Conversion: &apiextv1.CustomResourceConversion{
				Strategy: apiextv1.WebhookConverter,
				Webhook: &apiextv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextv1.WebhookClientConfig{
						Service: &apiextv1.ServiceReference{Namespace: testNamespace, Name: "capi-webhook-service", Path: ptr.To("/convert")},
					},
				},
			},
		},
	}
	create(ctx, t, c, crd)
	step("cainjector injects the CA into a CRD annotated cert-manager.io/inject-ca-from", time.Minute, func(ctx context.Context) (bool, error) {
		got := &apiextv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
			return false, err
		}
		return bytes.Equal(got.Spec.Conversion.Webhook.ClientConfig.CABundle, root.Data["tls.crt"]), nil
	})

	// Leader election used the Leases the chart's RBAC allows.
	for _, name := range []string{"cert-manager-controller", "cert-manager-cainjector-leader-election"} {
		lease := &coordinationv1.Lease{}
		get(ctx, t, c, "kube-system", name, lease)
		t.Logf("ok: leader Lease kube-system/%s held by %s", name, ptr.Deref(lease.Spec.HolderIdentity, "<nobody>"))
	}
	t.Logf("all checks passed in %s", time.Since(started).Round(time.Millisecond))
}

// buildArtifacts runs ../build.sh (idempotent: cached by the Go build cache)
// unless CERT_MANAGER_E2E_OUT names a directory it already filled.
func buildArtifacts(t *testing.T) string {
	t.Helper()
	if out := os.Getenv("CERT_MANAGER_E2E_OUT"); out != "" {
		return out
	}
	out := filepath.Join(os.TempDir(), "capwin-certmanager-e2e")
	begin := time.Now()
	cmd := exec.Command("bash", "../build.sh", out, imagePrefix)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("../build.sh failed: %v\n%s", err, log.String())
	}
	t.Logf("build.sh %s %s: %s", out, imagePrefix, time.Since(begin).Round(time.Millisecond))
	return out
}

func readManifest(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(f), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decoding %s: %v", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("converting %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// deploymentArgs returns, per container name, the args of the rendered
// Deployments with $(POD_NAMESPACE) expanded the way the kubelet would. It
// also checks the image/command contract documented in build.sh.
func deploymentArgs(t *testing.T, objs []*unstructured.Unstructured) map[string][]string {
	t.Helper()
	args := map[string][]string{}
	for _, u := range objs {
		if u.GetKind() != "Deployment" {
			continue
		}
		d := &appsv1.Deployment{}
		fromUnstructured(t, u, d)
		for _, ctr := range d.Spec.Template.Spec.Containers {
			wantImage := imagePrefix + ctr.Name + ":v1.21.2"
			if ctr.Image != wantImage || ctr.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Fatalf("container %s: image %s (%s), want %s (IfNotPresent)", ctr.Name, ctr.Image, ctr.ImagePullPolicy, wantImage)
			}
			if want := []string{"/" + ctr.Name}; !slices.Equal(ctr.Command, want) {
				t.Fatalf("container %s: command %v, want %v", ctr.Name, ctr.Command, want)
			}
			for _, a := range ctr.Args {
				args[ctr.Name] = append(args[ctr.Name], strings.ReplaceAll(a, "$(POD_NAMESPACE)", namespace))
			}
			t.Logf("manifest args of %s: %v", ctr.Name, ctr.Args)
		}
	}
	for _, name := range []string{"cert-manager-controller", "cert-manager-webhook", "cert-manager-cainjector"} {
		if _, ok := args[name]; !ok {
			t.Fatalf("no Deployment container %s in the manifest", name)
		}
	}
	return args
}

func localClientConfig(in admissionv1.WebhookClientConfig, port int) admissionv1.WebhookClientConfig {
	path := "/"
	if in.Service != nil && in.Service.Path != nil {
		path = *in.Service.Path
	}
	return admissionv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://localhost:%d%s", port, path))}
}

func create(ctx context.Context, t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func get(ctx context.Context, t *testing.T, c client.Client, ns, name string, obj client.Object) {
	t.Helper()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("getting %T %s/%s: %v", obj, ns, name, err)
	}
}

func certificateReady(c client.Client, name string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		crt := &cmapi.Certificate{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: testNamespace, Name: name}, crt); err != nil {
			return false, err
		}
		for _, cond := range crt.Status.Conditions {
			if cond.Type == cmapi.CertificateConditionReady {
				if cond.Status == cmmeta.ConditionTrue {
					return true, nil
				}
				return false, fmt.Errorf("Ready=%s %s: %s", cond.Status, cond.Reason, cond.Message)
			}
		}
		return false, errors.New("no Ready condition yet")
	}
}

func issuerReady(c client.Client, name string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		iss := &cmapi.Issuer{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: testNamespace, Name: name}, iss); err != nil {
			return false, err
		}
		for _, cond := range iss.Status.Conditions {
			if cond.Type == cmapi.IssuerConditionReady {
				if cond.Status == cmmeta.ConditionTrue {
					return true, nil
				}
				return false, fmt.Errorf("Ready=%s %s: %s", cond.Status, cond.Reason, cond.Message)
			}
		}
		return false, errors.New("no Ready condition yet")
	}
}

func httpOK(url string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("%s: %s %s", url, resp.Status, body)
		}
		return true, nil
	}
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// process is a component running as a subprocess; its output goes to a log
// file whose tail is printed when the test fails.
type process struct {
	name string
	log  string
	mu   sync.Mutex
	err  error // set when the process has exited
	done chan struct{}
}

func startProcess(t *testing.T, dir, bin string, args []string) *process {
	t.Helper()
	p := &process{name: filepath.Base(bin), log: filepath.Join(dir, filepath.Base(bin)+".log"), done: make(chan struct{})}
	logFile, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = fmt.Errorf("%s exited: %v", p.name, err)
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		logFile.Close()
		if t.Failed() {
			t.Logf("---- last lines of %s ----\n%s", p.log, tail(p.log, 40))
		}
	})
	return p
}

func (p *process) exited() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return fmt.Errorf("%w\n%s", p.err, tail(p.log, 30))
	}
	return nil
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
