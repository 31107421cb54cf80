package doctest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/cluster"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/release"
)

// The release the docs build: make release VERSION=v0.1.0 REGISTRY=registry.example.com/capwin.
var stamp = release.Stamp{Registry: "registry.example.com/capwin", Version: "v0.1.0"}

// world is where the docs run: a working directory (the repository root of the reader, with the
// release in out/), a HOME, and the management cluster.
type world struct {
	dir, home string
}

// newWorld makes what the docs' skipped steps would have made:
//   - out/ as make release writes it, without the image archives (hack/images builds and tests
//     those): the release files by the same code, render for linux/amd64 with the same flags,
//     and checksums.txt; and out/offline/repository as make release-offline writes it, without
//     the image archives (scripts/offline-repository.sh, from the module cache alone);
//   - ~/.kube/config: the management cluster, as clusterctl init left it (clusterctl's provider
//     inventory of the five providers; their CRDs and webhooks are the harness's);
//   - the Secret win1-kubeconfig that the control plane writes once it runs, naming the same API
//     server, which stands in for the workload cluster (the commands against it are checked,
//     not their output);
//   - corp-root-ca.pem and winrm-ca.pem, the company CAs that a reader has.
func newWorld(t *testing.T) *world {
	t.Helper()
	tmp := t.TempDir()
	w := &world{dir: filepath.Join(tmp, "capwin"), home: filepath.Join(tmp, "home")}
	out := filepath.Join(w.dir, "out")
	if err := release.WriteStamped(root, out, stamp); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(goCommand(), "build", "-trimpath", "-ldflags", "-s -w -buildid= -X main.version="+stamp.Version,
		"-o", filepath.Join(out, "render-linux-amd64"), "./bootstrap/cmd/render")
	build.Dir, build.Env = root, append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("render: %v: %s", err, b)
	}
	for _, step := range []error{
		writeChecksums(out),
		writeOfflineRepository(w.dir),
		writeCA(filepath.Join(w.dir, "corp-root-ca.pem")),
		writeCA(filepath.Join(w.dir, "winrm-ca.pem")),
		os.MkdirAll(filepath.Join(w.home, ".kube"), 0o700),
		copyFile(kubeconfig, filepath.Join(w.home, ".kube", "config")),
		initInventory(t.Context()),
		createKubeconfigSecret(t.Context()),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	return w
}

// writeChecksums writes out/checksums.txt as sha256sum prints it.
func writeChecksums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var sums strings.Builder
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(b), e.Name())
	}
	return os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums.String()), 0o644)
}

// writeCA writes a self-signed CA certificate in PEM.
func writeCA(path string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Corp Root CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// initInventory records the providers as `clusterctl init --bootstrap kubeadm,windows
// --control-plane kubeadm --infrastructure capwin` does, with clusterctl's own inventory client.
func initInventory(ctx context.Context) error {
	cfg, err := config.New(ctx, "")
	if err != nil {
		return err
	}
	inv := cluster.New(cluster.Kubeconfig{Path: kubeconfig}, cfg).ProviderInventory()
	if err := inv.EnsureCustomResourceDefinitions(ctx); err != nil {
		return err
	}
	for _, p := range []struct {
		name, namespace, version string
		typ                      clusterctlv1.ProviderType
	}{
		{"cluster-api", "capi-system", "v1.14.2", clusterctlv1.CoreProviderType},
		{"kubeadm", "capi-kubeadm-bootstrap-system", "v1.14.2", clusterctlv1.BootstrapProviderType},
		{"kubeadm", "capi-kubeadm-control-plane-system", "v1.14.2", clusterctlv1.ControlPlaneProviderType},
		{"windows", "capwin-bootstrap-system", stamp.Version, clusterctlv1.BootstrapProviderType},
		{"capwin", "capwin-infrastructure-system", stamp.Version, clusterctlv1.InfrastructureProviderType},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.namespace}}
		if err := client.IgnoreAlreadyExists(mgmt.Client.Create(ctx, ns)); err != nil {
			return err
		}
		if err := inv.Create(ctx, clusterctlv1.Provider{
			ObjectMeta:   metav1.ObjectMeta{Name: clusterctlv1.ManifestLabel(p.name, p.typ), Namespace: p.namespace},
			ProviderName: p.name, Type: string(p.typ), Version: p.version,
		}); err != nil {
			return err
		}
	}
	return nil
}

// createKubeconfigSecret writes win1-kubeconfig as the control plane does.
func createKubeconfigSecret(ctx context.Context) error {
	b, err := os.ReadFile(kubeconfig)
	if err != nil {
		return err
	}
	return mgmt.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "win1-kubeconfig", Namespace: "default",
			Labels: map[string]string{"cluster.x-k8s.io/cluster-name": "win1"}},
		Type: "cluster.x-k8s.io/secret",
		Data: map[string][]byte{"value": b},
	})
}

// verify checks that the docs' steps did what they say, on the management cluster.
func (w *world) verify(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	if _, err := os.Stat(filepath.Join(w.home, ".local", "bin", "render")); err != nil {
		t.Errorf("render is not installed: %v", err)
	}
	// make clusterctl stamps the version (a plain go build leaves GitVersion empty).
	version := exec.Command(filepath.Join(bin, "clusterctl"), "version", "-o", "short") //nolint:gosec // G204: the clusterctl built for this test
	version.Env = []string{"HOME=" + w.home}                                            // the docs' clusterctl.yaml: no version check
	if out, err := version.Output(); err != nil || strings.TrimSpace(string(out)) != "v1.14.2" {
		t.Errorf("clusterctl version -o short: %q %v, want v1.14.2", out, err)
	}
	get := func(kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(map[string]string{
			"MachineDeployment":      "cluster.x-k8s.io/v1beta2",
			"VCenterMachineTemplate": "infrastructure.cluster.x-k8s.io/v1beta1",
			"WindowsConfigTemplate":  "bootstrap.cluster.x-k8s.io/v1beta1",
			"ConfigMap":              "v1",
		}[kind])
		u.SetKind(kind)
		if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, u); err != nil {
			t.Errorf("%s %s: %v", kind, name, err)
		}
		return u
	}
	md := get("MachineDeployment", "win1-windows-ltsc2025")
	if ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name"); ref != "win1-windows-ltsc2025" {
		t.Errorf("MachineDeployment win1-windows-ltsc2025 uses the machine template %q", ref)
	}
	mt := get("VCenterMachineTemplate", "win1-windows-ltsc2025")
	if image, _, _ := unstructured.NestedString(mt.Object, "spec", "template", "spec", "template"); image != "windows-2025-kube-v1.36.3" {
		t.Errorf("VCenterMachineTemplate win1-windows-ltsc2025 clones %q", image)
	}
	wc := get("WindowsConfigTemplate", "win1-windows-ltsc2025")
	labels, _, _ := unstructured.NestedStringMap(wc.Object, "spec", "template", "spec", "nodeRegistration", "labels")
	if labels["capwin.io/windows-version"] != "ltsc2025" {
		t.Errorf("WindowsConfigTemplate win1-windows-ltsc2025 labels nodes %v", labels)
	}
	cm := get("ConfigMap", "win1-kube-proxy-windows")
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	var versions []string
	for _, v := range []string{"v1.36.3", "v1.37.1"} {
		if strings.Contains(fmt.Sprint(data), "kube-proxy-windows-"+v) {
			versions = append(versions, v)
		}
	}
	if !slices.Contains(versions, "v1.37.1") {
		t.Errorf("ConfigMap win1-kube-proxy-windows has the DaemonSets of %v, not of v1.37.1", versions)
	}
}
