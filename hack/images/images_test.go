package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// testOptions build one image for one platform, at a fixed time, from this repository, into out.
func testOptions(out, only string) options {
	return options{
		root: "../..", out: out, registry: "example.com/capwin", version: "v0.0.0-test",
		flannelVersion: "v0.27.4", windowsExporterVersion: "v0.27.2", platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}},
		only: map[string]bool{only: true}, created: time.Unix(1_700_000_000, 0).UTC(),
	}
}

// oneBuild is an image built once per test run, read by every test that looks at it.
type oneBuild struct {
	idx     v1.ImageIndex
	archive string
	err     error
}

var (
	// buildsDir holds the shared builds until the run ends; cleanups remove what reading their
	// archives unpacked. The tests run one after the other.
	buildsDir string
	builds    = map[string]*oneBuild{}
	cleanups  []func()
)

// shared returns the run's build of an image (building it the first time) and its archive.
func shared(t *testing.T, image string) (v1.ImageIndex, string) {
	t.Helper()
	b := builds[image]
	if b == nil {
		b = &oneBuild{}
		b.idx, b.archive, b.err = buildImage(filepath.Join(buildsDir, image), image)
		builds[image] = b
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.idx, b.archive
}

// buildImage builds one image into out and reads its archive back.
func buildImage(out, image string) (v1.ImageIndex, string, error) {
	o := testOptions(out, image)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, "", err
	}
	if err := buildAll(context.Background(), o); err != nil {
		return nil, "", err
	}
	files, _ := filepath.Glob(filepath.Join(o.out, image+"-*.oci.tar"))
	if len(files) != 1 {
		return nil, "", fmt.Errorf("archives of %s: %v", image, files)
	}
	_, idx, cleanup, err := readArchive(files[0])
	if err != nil {
		return nil, "", err
	}
	cleanups = append(cleanups, cleanup)
	return idx, files[0], nil
}

// TestReproducible builds every image the other tests read a second time, in another folder, and
// checks both builds have one digest. The second build compiles nothing (the Go build cache has
// the first's packages): it links and assembles again.
func TestReproducible(t *testing.T) {
	for _, image := range []string{"capwin-bootstrap-windows", "capwin-infrastructure", "capwin-flanneld-windows"} {
		t.Run(image, func(t *testing.T) {
			first, _ := shared(t, image)
			second, _, err := buildImage(t.TempDir(), image)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := digest(t, first), digest(t, second); a != b {
				t.Errorf("two builds of the same source: digests %s and %s", a, b)
			}
		})
	}
}

func digest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// onlyImage is the single image of an index, with its platform.
func onlyImage(t *testing.T, idx v1.ImageIndex) (v1.Image, v1.Platform) {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 || m.Manifests[0].Platform == nil {
		t.Fatalf("index: %v %+v", err, m)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img, *m.Manifests[0].Platform
}

// files lists every entry of an image's layers: name -> tar header.
func files(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*tar.Header{}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(rc)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out[strings.Trim(h.Name, "/")] = h
		}
		_ = rc.Close() // read only
	}
	return out
}

func TestManagerImage(t *testing.T) {
	first, archive := shared(t, "capwin-bootstrap-windows")
	img, p := onlyImage(t, first)
	if p.OS != "linux" || p.Architecture != "amd64" {
		t.Errorf("platform %s", p)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cfg.Config.User)
	}
	fs := files(t, img)
	if h := fs["manager"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "ko-app/bootstrap" {
		t.Errorf("/manager: %+v", h)
	}
	// No shell, nothing to run but the manager.
	for n, h := range fs {
		if h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0 && n != "ko-app/bootstrap" {
			t.Errorf("executable %s", n)
		}
	}
	for _, n := range []string{"etc/passwd", "etc/ssl/certs/ca-certificates.crt"} {
		if fs[n] == nil {
			t.Errorf("no /%s", n)
		}
	}
	if sboms, _ := filepath.Glob(filepath.Join(filepath.Dir(archive), "capwin-bootstrap-windows-*.spdx.json")); len(sboms) == 0 {
		t.Error("no SBOM")
	}
	t.Run("push", func(t *testing.T) { testPush(t, archive, digest(t, first)) })
}

// testPush pushes an archive to an in-process registry and reads the index back.
func testPush(t *testing.T, archive string, want v1.Hash) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	got, err := push(context.Background(), archive, u.Host+"/capwin")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got, "@"+want.String()) {
		t.Errorf("pushed %s, want digest %s", got, want)
	}
	ref, err := name.ParseReference(u.Host + "/capwin/capwin-bootstrap-windows:v0.0.0-test")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d := digest(t, idx); d != want {
		t.Errorf("registry has %s, want %s", d, want)
	}
}

func TestFlanneldWindowsImage(t *testing.T) {
	checkHostProcessImage(t, "capwin-flanneld-windows", "flanneld.exe")
}

// TestNodeHealthImage: capwin's node health checker, built from this repository.
func TestNodeHealthImage(t *testing.T) {
	checkHostProcessImage(t, "capwin-node-health", "capwin-node-health.exe")
}

// TestWindowsExporterImage: windows_exporter of the monitoring addon, built from its Go module.
func TestWindowsExporterImage(t *testing.T) {
	checkHostProcessImage(t, "capwin-windows-exporter", "windows_exporter.exe")
}

// checkHostProcessImage: one windows/amd64 image whose program is at the root of its files, with
// a security descriptor, the registry hives a Windows layer needs, and nothing outside Files/.
func checkHostProcessImage(t *testing.T, image, program string) {
	first, _ := shared(t, image)
	img, p := onlyImage(t, first)
	if p.OS != "windows" || p.Architecture != "amd64" {
		t.Errorf("platform %s", p)
	}
	fs := files(t, img)
	exe := fs["Files/"+program]
	if exe == nil || exe.PAXRecords["MSWINDOWS.rawsd"] == "" {
		t.Errorf("Files/%s: %+v", program, exe)
	}
	for _, n := range append([]string{"Hives"}, hiveNames...) {
		if n != "Hives" {
			n = "Files/Windows/System32/config/" + n
		}
		if fs[n] == nil {
			t.Errorf("no %s", n)
		}
	}
	for n := range fs {
		if n != "Hives" && n != "Files" && !strings.HasPrefix(n, "Files/") {
			t.Errorf("%s: a Windows layer keeps files under Files/", n)
		}
	}
}

func TestMain(m *testing.M) {
	if err := os.Setenv("GOTOOLCHAIN", "local"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "capwin-images-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	buildsDir = dir
	defer func() {
		for _, c := range cleanups {
			c()
		}
		removeTemp(dir)
	}()
	return m.Run()
}

// TestStartScriptsFindThePrograms: the templates' start scripts run each program from the root
// of the image's mount, where buildHostProcess puts it.
func TestStartScriptsFindThePrograms(t *testing.T) {
	for script, img := range map[string]hostProcessImage{
		"../../templates/addons/flannel/start-flanneld.ps1":                   flanneldImage("v0.27.4"),
		"../../templates/addons/kube-proxy-windows/base/start-kube-proxy.ps1": kubeProxyImage("v1.36.3"),
		"../../templates/addons/monitoring/start-windows-exporter.ps1":        windowsExporterImage("v0.27.2"),
	} {
		body, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		if want := "Join-Path $root '" + img.exe + "'"; !strings.Contains(string(body), want) {
			t.Errorf("%s does not run %s", script, want)
		}
	}
}
