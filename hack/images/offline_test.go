package main

import (
	"archive/tar"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestOfflineProgramImage: a program of another module becomes an image with the program at
// the path its Deployment runs, as nonroot, on the shell-less root, with an SBOM; the program
// in the image runs. (A program of this repository stands in for Cluster API's managers, whose
// cold build takes minutes; make release-offline builds those.)
func TestOfflineProgramImage(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	o := options{root: root, out: t.TempDir(), created: time.Unix(1700000000, 0).UTC(),
		platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}}
	p := linuxProgram{path: "manager", src: goSource{module: "github.com/capwin/capwin", version: "v0.0.0-test",
		pkg: "./hack/e2e/capicomponents", root: root}}
	idx, err := buildLinuxProgram(context.Background(), o, p, filepath.Join(o.out, "x-v0"))
	if err != nil {
		t.Fatal(err)
	}
	img, pl := onlyImage(t, idx)
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if pl.OS != "linux" || pl.Architecture != "amd64" || cfg.Config.User != "65532:65532" ||
		strings.Join(cfg.Config.Entrypoint, " ") != "/manager" {
		t.Errorf("platform %s, user %q, entrypoint %q", pl, cfg.Config.User, cfg.Config.Entrypoint)
	}
	fs := files(t, img)
	for n, h := range fs {
		if h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0 && n != "manager" {
			t.Errorf("executable %s", n)
		}
	}
	if h := fs["manager"]; h == nil || h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
		t.Fatalf("/manager: %+v", h)
	}
	if _, err := os.Stat(filepath.Join(o.out, "x-v0.linux-amd64.spdx.json")); err != nil {
		t.Error(err)
	}
	// The program in the image is the program: it answers -h with its usage.
	exe := filepath.Join(t.TempDir(), "manager")
	if err := extract(img, "manager", exe); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(exe, "-h").CombinedOutput() //nolint:gosec // G204: the program just built
	if !strings.Contains(string(out), "-module-dir") {
		t.Errorf("manager -h: %s", out)
	}
}

// TestOfflinePrograms: the images the components name, at the paths their Deployments run.
func TestOfflinePrograms(t *testing.T) {
	capi := capiPrograms("v1.14.2")
	cm := certManagerPrograms("/repo", "v1.21.2")
	for image, want := range map[string]string{
		"cluster-api-controller": "sigs.k8s.io/cluster-api/core", "kubeadm-bootstrap-controller": "sigs.k8s.io/cluster-api/bootstrap/kubeadm",
		"kubeadm-control-plane-controller": "sigs.k8s.io/cluster-api/controlplane/kubeadm",
	} {
		p := capi[image]
		if p.path != "manager" || p.src.pkg != want || !strings.Contains(strings.Join(p.src.ldflags, " "), "gitVersion=v1.14.2") ||
			!strings.Contains(strings.Join(p.src.ldflags, " "), "gitMinor=14") || len(p.src.requires) != 1 {
			t.Errorf("%s: %+v", image, p)
		}
	}
	for _, n := range []string{"controller", "webhook", "cainjector"} {
		p := cm["cert-manager-"+n]
		if p.path != "cert-manager-"+n || p.src.root != "/repo/hack/e2e/certmanager" || p.src.pkg != "./cmd/cert-manager-"+n {
			t.Errorf("%s: %+v", n, p)
		}
	}
}

// extract writes the file name of img's layers to dst.
func extract(img v1.Image, name, dst string) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if h.Name == name {
				defer func() { _ = rc.Close() }()
				if err := writeFrom(dst, tr); err != nil {
					return err
				}
				return os.Chmod(dst, 0o755) //nolint:gosec // G302: a program to run

			}
		}
		_ = rc.Close()
	}
	return os.ErrNotExist
}
