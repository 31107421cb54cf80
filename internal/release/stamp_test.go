package release

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestStampImages(t *testing.T) {
	in := `image: ghcr.io/capwin/capwin-infrastructure:dev
image: "${FLANNEL_WINDOWS_IMAGE:=ghcr.io/capwin/capwin-flanneld-windows:dev}"
image: "${KUBE_PROXY_WINDOWS_IMAGE:=ghcr.io/capwin/capwin-kube-proxy-windows:${KUBERNETES_VERSION}}"
image: ghcr.io/capwin/capwin-e2e-sim:development
image: ghcr.io/flannel-io/flannel:v0.28.9
`
	for _, tc := range []struct {
		name string
		s    Stamp
		want string
	}{
		{"defaults keep the checked-in names", Stamp{}, in},
		{"release", Stamp{Registry: "example.com/capwin/", Version: "v0.2.0"}, `image: example.com/capwin/capwin-infrastructure:v0.2.0
image: "${FLANNEL_WINDOWS_IMAGE:=example.com/capwin/capwin-flanneld-windows:v0.2.0}"
image: "${KUBE_PROXY_WINDOWS_IMAGE:=example.com/capwin/capwin-kube-proxy-windows:${KUBERNETES_VERSION}}"
image: example.com/capwin/capwin-e2e-sim:development
image: ghcr.io/flannel-io/flannel:v0.28.9
`},
		{"registry below the default one", Stamp{Registry: "ghcr.io/capwin/staging", Version: "v0.1.1"}, `image: ghcr.io/capwin/staging/capwin-infrastructure:v0.1.1
image: "${FLANNEL_WINDOWS_IMAGE:=ghcr.io/capwin/staging/capwin-flanneld-windows:v0.1.1}"
image: "${KUBE_PROXY_WINDOWS_IMAGE:=ghcr.io/capwin/staging/capwin-kube-proxy-windows:${KUBERNETES_VERSION}}"
image: ghcr.io/capwin/staging/capwin-e2e-sim:development
image: ghcr.io/flannel-io/flannel:v0.28.9
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.s.images([]byte(in))); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestStampMetadata(t *testing.T) {
	meta := []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n  - major: 0\n    minor: 1\n    contract: v1beta2\n")
	for _, tc := range []struct {
		version string
		series  int
	}{{"dev", 1}, {"v0.1.0", 1}, {"v0.1.7-rc.1", 1}, {"v0.2.0", 2}, {"v1.0.0", 2}} {
		got, err := Stamp{Version: tc.version}.metadataFile(meta)
		if err != nil {
			t.Fatal(tc.version, err)
		}
		var m struct {
			ReleaseSeries []struct{ Contract string } `json:"releaseSeries"`
		}
		if err := yaml.Unmarshal(got, &m); err != nil {
			t.Fatal(tc.version, err)
		}
		if len(m.ReleaseSeries) != tc.series || m.ReleaseSeries[len(m.ReleaseSeries)-1].Contract != "v1beta2" {
			t.Errorf("%s: %s", tc.version, got)
		}
	}
	for _, bad := range []string{"0.1.0", "v0.1", "latest"} {
		if err := (Stamp{Version: bad}).validate(); err == nil {
			t.Errorf("version %q accepted", bad)
		}
	}
}

// TestWriteStamped writes a release for another registry and a new minor: no file names the
// development registry or tag any more, and clusterctl finds the new minor's release series.
func TestWriteStamped(t *testing.T) {
	dir := t.TempDir()
	if err := WriteStamped("../..", dir, Stamp{Registry: "example.com/capwin", Version: "v0.2.0"}); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(DefaultRegistry+"/")) {
			t.Errorf("%s names %s", f.Name(), DefaultRegistry)
		}
		if strings.HasSuffix(f.Name(), "-components.yaml") && !bytes.Contains(b, []byte("example.com/capwin/capwin-")) {
			t.Errorf("%s: no manager image in example.com/capwin", f.Name())
		}
	}
	for name := range Examples {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Contains(b, []byte("kind: ServiceMonitor")) {
			t.Errorf("%s: no ServiceMonitor (%v)", name, err)
		}
	}
	meta, err := os.ReadFile(filepath.Join(dir, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(meta, []byte("minor: 2\n    contract: v1beta2")) {
		t.Errorf("metadata.yaml:\n%s", meta)
	}
}
