package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// An air-gapped site's clusterctl init pulls Cluster API's three managers and cert-manager's
// three programs from its own registry (make release-offline). They are built here from their
// pinned modules, as capwin's managers are: static, no cgo, on the same shell-less root.

// linuxProgram is a Linux image of one Go program: the static root, and the program at path,
// which the components' Deployments run as their command.
type linuxProgram struct {
	path string
	src  goSource
}

// capiPrograms are Cluster API's managers by image name; its components run /manager (its
// Dockerfile's layout), stamped as its release stamps them.
func capiPrograms(version string) map[string]linuxProgram {
	var major, minor int
	_, _ = fmt.Sscanf(version, "v%d.%d", &major, &minor)
	ld := []string{"-X sigs.k8s.io/cluster-api/version.gitVersion=" + version, "-X sigs.k8s.io/cluster-api/version.gitTreeState=clean",
		fmt.Sprintf("-X sigs.k8s.io/cluster-api/version.gitMajor=%d", major), fmt.Sprintf("-X sigs.k8s.io/cluster-api/version.gitMinor=%d", minor)}
	program := func(pkg string) linuxProgram {
		// Cluster API's go.mod replaces its api module with ./api: a module that requires
		// Cluster API pins that one to the same version itself.
		return linuxProgram{path: "manager", src: goSource{module: "sigs.k8s.io/cluster-api", version: version, pkg: pkg, ldflags: ld,
			requires: []string{"sigs.k8s.io/cluster-api/api " + version}}}
	}
	return map[string]linuxProgram{
		"cluster-api-controller":           program("sigs.k8s.io/cluster-api/core"),
		"kubeadm-bootstrap-controller":     program("sigs.k8s.io/cluster-api/bootstrap/kubeadm"),
		"kubeadm-control-plane-controller": program("sigs.k8s.io/cluster-api/controlplane/kubeadm"),
	}
}

// certManagerPrograms are cert-manager's controller, webhook and cainjector by image name, from
// hack/e2e/certmanager (the mains written for the module's packages; its README says how they
// differ from upstream's). Its manifest runs /cert-manager-<name>.
func certManagerPrograms(root, version string) map[string]linuxProgram {
	out := map[string]linuxProgram{}
	for _, n := range []string{"controller", "webhook", "cainjector"} {
		name := "cert-manager-" + n
		out[name] = linuxProgram{path: name, src: goSource{module: "github.com/cert-manager/cert-manager", version: version,
			pkg: "./cmd/" + name, root: filepath.Join(root, "hack", "e2e", "certmanager"),
			ldflags: []string{"-X github.com/cert-manager/cert-manager/pkg/util.AppVersion=" + version}}}
	}
	return out
}

// offlineCmd is `images offline`: the images of Cluster API and cert-manager for an air-gapped
// site's clusterctl repository, with images.txt and checksums.txt.
func offlineCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("offline", flag.ExitOnError)
	var o options
	o.flags(fs, "out/offline")
	capi := fs.String("capi-version", "v1.14.2", "Cluster API version of the three managers")
	certManager := fs.String("cert-manager-version", "v1.21.2", "cert-manager version (hack/e2e/certmanager's)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	_ = fs.Parse(args)
	if err := o.setPlatforms(*platforms); err != nil {
		return err
	}
	var err error
	if o.created, err = sourceDate(o.root); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	set := &imageSet{o: o}
	for _, group := range []struct {
		version  string
		programs map[string]linuxProgram
	}{{*capi, capiPrograms(*capi)}, {*certManager, certManagerPrograms(o.root, *certManager)}} {
		for _, image := range sortedKeys(group.programs) {
			p := group.programs[image]
			err := set.add(image, group.version, func(sbom string) (v1.ImageIndex, error) { return buildLinuxProgram(ctx, o, p, sbom) })
			if err != nil {
				return err
			}
		}
	}
	return set.finish()
}

// buildLinuxProgram builds p for every platform of o and writes the SPDX SBOM of each build to
// sbomPrefix.<os>-<arch>.spdx.json.
func buildLinuxProgram(ctx context.Context, o options, p linuxProgram, sbomPrefix string) (v1.ImageIndex, error) {
	tmp, err := os.MkdirTemp("", "capwin-linux")
	if err != nil {
		return nil, err
	}
	defer removeTemp(tmp)
	static, err := staticLayer(o.created)
	if err != nil {
		return nil, err
	}
	var images []v1.Image
	for _, pl := range o.platforms {
		exe := filepath.Join(tmp, pl.OS+"-"+pl.Architecture, p.path)
		if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
			return nil, err
		}
		if err := buildGo(ctx, p.src, pl.OS, pl.Architecture, exe); err != nil {
			return nil, err
		}
		img, err := programImage(o, p, pl, static, exe)
		if err != nil {
			return nil, err
		}
		sbom, err := spdxOf(exe, p.src, o.created)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(sbomPrefix+"."+pl.OS+"-"+pl.Architecture+".spdx.json", sbom, 0o644); err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	return index(images...)
}

// programImage is the image of one platform: the static root and the program at /<p.path>, run
// as nonroot.
func programImage(o options, p linuxProgram, pl v1.Platform, static v1.Layer, exe string) (v1.Image, error) {
	body, err := os.ReadFile(exe) //nolint:gosec // G304: the binary just built into this build's temporary folder
	if err != nil {
		return nil, err
	}
	app, err := layer([]entry{{name: p.path, mode: 0o755, body: body}}, o.created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), static, app)
	if err != nil {
		return nil, err
	}
	return withConfig(img, pl, o.created, v1.Config{
		User:       fmt.Sprintf("%d:%d", nonroot, nonroot),
		WorkingDir: "/",
		Entrypoint: []string{"/" + p.path},
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
	})
}

// setPlatforms parses a comma-separated platform list into o.platforms.
func (o *options) setPlatforms(list string) error {
	for _, p := range split(list) {
		pl, err := v1.ParsePlatform(p)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(pl.OS, "linux") {
			return fmt.Errorf("platform %s: the images are Linux images", p)
		}
		o.platforms = append(o.platforms, *pl)
	}
	return nil
}
