package userdata

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/containerd/v2/core/remotes/docker"

	"github.com/capwin/capwin/internal/test/containerdcfg"
)

// TestContainerdResolvesRegistries loads the rendered config.toml and hosts folders with
// containerd's own code (the config loader with the CRI image plugin's migration to the current
// config version, and the hosts.toml resolver the CRI uses for every pull) and checks where each
// registry's pulls go, with which CA, capabilities and credentials.
func TestContainerdResolvesRegistries(t *testing.T) {
	for _, version := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("config version %d", version), func(t *testing.T) {
			in := fullInput(FormatPowerShell)
			in.ContainerdConfigVersion = version
			_, doc := render(t, in)
			if !strings.HasPrefix(doc.Containerd.Config, fmt.Sprintf("version = %d\n", version)) {
				t.Fatalf("config.toml is not version %d:\n%s", version, doc.Containerd.Config)
			}
			containerdResolves(t, doc)
		})
	}
}

func containerdResolves(t *testing.T, doc *Document) {
	ctx := context.Background()
	root := t.TempDir() // stands for C:\Program Files\containerd
	onNode := func(p string) string {
		rel, ok := strings.CutPrefix(p, containerDir+`\`)
		if !ok {
			t.Fatalf("%s is not under %s", p, containerDir)
		}
		return filepath.Join(root, filepath.FromSlash(strings.ReplaceAll(rel, `\`, "/")))
	}
	writeNodeFile(t, onNode(doc.Containerd.ConfigPath), []byte(doc.Containerd.Config))
	for _, f := range doc.Containerd.Hosts {
		data, _ := base64.StdEncoding.DecodeString(f.Content)
		writeNodeFile(t, onNode(f.Path), data)
	}

	images, err := containerdcfg.Load(ctx, onNode(doc.Containerd.ConfigPath))
	if err != nil {
		t.Fatal(err)
	}
	if images.SandboxImage() != "registry.k8s.io/pause:3.10" {
		t.Errorf("sandbox image %q: the pause image is not pulled through the CRI image service", images.SandboxImage())
	}
	if images.Registry.ConfigPath != CertsDir {
		t.Fatalf("config_path %q, want %q", images.Registry.ConfigPath, CertsDir)
	}
	pull, resolveCap := docker.HostCapabilityPull, docker.HostCapabilityResolve
	all := pull | resolveCap | docker.HostCapabilityPush | docker.HostCapabilityReferrers
	for _, tc := range []struct {
		registry string
		want     []endpoint
	}{
		{"registry.k8s.io", []endpoint{
			{"https://mirror.corp.example:5000/v2", pull | resolveCap, true, false, `puller:pa'ss"w$(0)rd`},
			{"http://cache.corp.example/v2/k8s", pull, false, false, ""},
			{"https://registry.k8s.io/v2", all, false, false, ""},
		}},
		{"registry.corp.example:5000", []endpoint{{"https://registry.corp.example:5000/v2", all, true, false, "robot$ci:secret"}}},
		// Credentials only: an entry is exactly that host's settings, so _default's mirror is not used.
		{"docker.io", []endpoint{
			{"https://registry-1.docker.io/v2", all, false, false, "hub-user:hub-token"},
		}},
		{"quay.io", []endpoint{
			{"https://proxy.corp.example/v2", pull | resolveCap, false, true, ""},
			{"https://quay.io/v2", all, false, false, ""},
		}},
	} {
		hosts, err := containerdcfg.Resolve(ctx, images, onNode(images.Registry.ConfigPath), tc.registry)
		if err != nil {
			t.Fatal(err)
		}
		var got []endpoint
		for _, h := range hosts {
			got = append(got, endpoint{url: h.URL, caps: h.Capabilities, ownCA: h.RootCAs != nil && trusts(h.RootCAs), skipVerify: h.SkipVerify, creds: h.Credentials})
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s resolves to\n  %+v\nwant\n  %+v", tc.registry, got, tc.want)
		}
	}
}

// endpoint is one host containerd tries for a pull, in order.
type endpoint struct {
	url               string
	caps              docker.HostCapabilities
	ownCA, skipVerify bool
	creds             string
}

// trusts says whether pool holds the test CA (a self-signed CA verifies against a pool with it).
func trusts(pool *x509.CertPool) bool {
	block, _ := pem.Decode([]byte(testCA))
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	_, err = ca.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err == nil
}

func writeNodeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
