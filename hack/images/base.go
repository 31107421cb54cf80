package main

import (
	"encoding/pem"
	"fmt"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// nonroot is the user and group the manager images run as (distroless's "nonroot").
const nonroot = 65532

// caBundle is Mozilla's root store as the x509roots/fallback module pins it, so that the image
// does not depend on the build host's certificates. Roots with constraints that PEM cannot
// carry (distrust after a date) are left out.
func caBundle() []byte {
	var out []byte
	for r := range bundle.Roots() {
		if r.Constraint == nil {
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})...)
		}
	}
	return out
}

// staticLayer is a distroless-like root without a shell or any other program: users root and
// nonroot, CA certificates, /tmp and nonroot's home.
func staticLayer(mtime time.Time) (v1.Layer, error) {
	return layer([]entry{
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, body: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonroot))},
		{name: "etc/nsswitch.conf", mode: 0o644, body: []byte("hosts: files dns\n")},
		{name: "etc/passwd", mode: 0o644, body: []byte(fmt.Sprintf(
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonroot, nonroot))},
		{name: "etc/ssl", mode: 0o755, dir: true},
		{name: "etc/ssl/certs", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: caBundle()},
		{name: "home", mode: 0o755, dir: true},
		{name: "home/nonroot", mode: 0o700, uid: nonroot, gid: nonroot, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
	}, mtime)
}

// managerBase is the base of a manager image for each platform: the static root, and /manager
// linking to the binary ko adds at /ko-app/<name>, because the components run command
// ["/manager"] (as the Dockerfile's images have it).
func managerBase(binary string, platforms []v1.Platform, mtime time.Time) (v1.ImageIndex, error) {
	static, err := staticLayer(mtime)
	if err != nil {
		return nil, err
	}
	link, err := layer([]entry{{name: "manager", mode: 0o777, link: path.Join("ko-app", binary)}}, mtime)
	if err != nil {
		return nil, err
	}
	var images []v1.Image
	for _, p := range platforms {
		img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), static, link)
		if err != nil {
			return nil, err
		}
		img, err = withConfig(img, p, mtime, v1.Config{
			User:       fmt.Sprintf("%d:%d", nonroot, nonroot),
			WorkingDir: "/",
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		})
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	return index(images...)
}

// index is an OCI image index of images, each with the platform of its config.
func index(images ...v1.Image) (v1.ImageIndex, error) {
	var adds []mutate.IndexAddendum
	for _, img := range images {
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cfg.Platform()}})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...), nil
}

// withConfig sets img's platform, creation time and run configuration.
func withConfig(img v1.Image, p v1.Platform, created time.Time, c v1.Config) (v1.Image, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant, cfg.OSVersion = p.OS, p.Architecture, p.Variant, p.OSVersion
	cfg.Created = v1.Time{Time: created}
	cfg.Config = c
	for i := range cfg.History {
		cfg.History[i].Created = v1.Time{Time: created}
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
}
