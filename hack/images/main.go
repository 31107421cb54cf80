// Command images builds capwin's release images as OCI image archives (make release-images)
// and pushes them (make release-push):
//
//   - the managers capwin-bootstrap-windows and capwin-infrastructure and the addon installer
//     capwin-addon-installer, for linux/amd64 and linux/arm64, with ko on a static non-root base
//     built here (nothing is pulled);
//   - the Windows HostProcess images capwin-flanneld-windows, capwin-windows-exporter and
//     capwin-node-health (tag: the release version) and capwin-kube-proxy-windows (tag: each
//     Kubernetes version), for windows/amd64.
//
// Every image is one <image>-<tag>.oci.tar in the output folder, with SPDX SBOMs beside it,
// images.txt (reference@digest and archive) and checksums.txt (sha256 of every file there).
//
//	images build -root . -out out -registry example.com/capwin -version v0.1.0 -kubernetes-versions v1.36.3
//	images push -out out [-registry other.example.com/capwin]
//	images docker-archive -out out -dest DIR [-platform linux/amd64]   (docker load -i DIR/<image>-<tag>.docker.tar)
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// options of a build.
type options struct {
	root, out, registry, version string
	kubernetesVersions           []string
	flannelVersion               string
	windowsExporterVersion       string
	platforms                    []v1.Platform
	only                         map[string]bool // image names to build; all when empty
	created                      time.Time
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: images build|offline|push|docker-archive [flags]")
		os.Exit(2)
	}
	log.SetOutput(quietKo{os.Stderr})
	ctx := context.Background()
	var err error
	switch os.Args[1] {
	case "build":
		err = buildCmd(ctx, os.Args[2:])
	case "offline":
		err = offlineCmd(ctx, os.Args[2:])
	case "push":
		err = pushCmd(ctx, os.Args[2:])
	case "docker-archive":
		err = dockerArchiveCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (build, offline, push or docker-archive)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

// flags defines the flags both build commands have: -root, -out (default out) and -registry.
func (o *options) flags(fs *flag.FlagSet, out string) {
	fs.StringVar(&o.root, "root", ".", "repository root (the managers' module; hack/e2e/certmanager holds cert-manager's mains)")
	fs.StringVar(&o.out, "out", out, "output folder")
	fs.StringVar(&o.registry, "registry", "ghcr.io/capwin", "registry the images are named in")
}

func buildCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	var o options
	o.flags(fs, "out")
	fs.StringVar(&o.version, "version", "dev", "release version: the tag of the managers and flanneld")
	kube := fs.String("kubernetes-versions", "v1.36.3", "comma-separated Kubernetes versions to build kube-proxy for Windows of")
	fs.StringVar(&o.flannelVersion, "flannel-version", "v0.27.4", "flannel version built into capwin-flanneld-windows")
	fs.StringVar(&o.windowsExporterVersion, "windows-exporter-version", "v0.27.2", "windows_exporter version built into capwin-windows-exporter")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms of the manager images")
	only := fs.String("only", "", "comma-separated image names to build (default: all)")
	_ = fs.Parse(args)
	o.kubernetesVersions = split(*kube)
	if err := o.setPlatforms(*platforms); err != nil {
		return err
	}
	o.only = map[string]bool{}
	for _, n := range split(*only) {
		o.only[n] = true
	}
	var err error
	if o.created, err = sourceDate(o.root); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	return buildAll(ctx, o)
}

// sourceDate is the time stamped into images and SBOMs: SOURCE_DATE_EPOCH, else the time of
// the commit checked out, so that a build of the same commit gives the same digests.
func sourceDate(root string) (time.Time, error) {
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		b, err := exec.Command("git", "-C", root, "log", "-1", "--format=%ct").Output() //nolint:gosec // G204: git on the checkout this build was given
		if err != nil {
			return time.Time{}, fmt.Errorf("no SOURCE_DATE_EPOCH and no git commit time: %w", err)
		}
		epoch = strings.TrimSpace(string(b))
	}
	s, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", epoch, err)
	}
	return time.Unix(s, 0).UTC(), nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
