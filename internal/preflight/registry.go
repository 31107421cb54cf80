package preflight

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
)

// Registry reads what images hold from their registries; it only reads manifests and image
// configs, never layers.
type Registry struct {
	// Transport reaches the registries (nil: remote.DefaultTransport). Give one with the private
	// registries' CA in its TLS roots.
	Transport http.RoundTripper
	// Keychain holds the credentials of the one who runs the check (authn.DefaultKeychain: the
	// docker config); an image's pull Secrets come first.
	Keychain authn.Keychain
	// Insecure names registries (host[:port]) reached over plain HTTP.
	Insecure []string

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	image Image
	err   error
}

// Image is what an image reference holds: one image or an index of them.
type Image struct {
	// Windows are the os.version values of its Windows amd64 images.
	Windows []string `json:"windows,omitempty"`
	// Others are the os/architecture of its other images.
	Others []string `json:"others,omitempty"`
}

// Read reads image's manifest (and the configs it needs for os.version), with the credentials of
// pullSecrets first. Results are kept for the next Pod template that names the same image with
// the same Secrets.
func (r *Registry) Read(ctx context.Context, image string, pullSecrets []corev1.Secret) (Image, error) {
	key := image
	for _, s := range pullSecrets {
		key += "\x00" + s.Namespace + "/" + s.Name
	}
	r.mu.Lock()
	if c, ok := r.cache[key]; ok {
		r.mu.Unlock()
		return c.image, c.err
	}
	r.mu.Unlock()
	img, err := r.read(ctx, image, pullSecrets)
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[string]cached{}
	}
	r.cache[key] = cached{img, err}
	r.mu.Unlock()
	return img, err
}

func (r *Registry) read(ctx context.Context, image string, pullSecrets []corev1.Secret) (Image, error) {
	var opts []name.Option
	if ref, err := name.ParseReference(image); err == nil && slices.Contains(r.Insecure, ref.Context().RegistryStr()) {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(image, opts...)
	if err != nil {
		return Image{}, err
	}
	keychains := []authn.Keychain{secretKeychain(pullSecrets)}
	if r.Keychain != nil {
		keychains = append(keychains, r.Keychain)
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.NewMultiKeychain(keychains...))}
	if r.Transport != nil {
		ropts = append(ropts, remote.WithTransport(r.Transport))
	}
	desc, err := remote.Get(ref, ropts...)
	if err != nil {
		return Image{}, err
	}
	var out Image
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return Image{}, err
		}
		err = out.addIndex(idx, 0)
		return out, err
	default:
		img, err := desc.Image()
		if err != nil {
			return Image{}, err
		}
		err = out.addImage(img, nil)
		return out, err
	}
}

// addIndex adds the images of an index (and of the indexes it holds, two levels deep).
func (o *Image) addIndex(idx v1.ImageIndex, depth int) error {
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range m.Manifests {
		switch {
		case d.MediaType.IsIndex() && depth < 2:
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return err
			}
			if err := o.addIndex(child, depth+1); err != nil {
				return err
			}
		case d.MediaType.IsImage():
			if p := d.Platform; p != nil && p.OS == "unknown" {
				continue // an attestation, not an image to run
			}
			if p := d.Platform; p != nil && (p.OS != "windows" || p.OSVersion != "") {
				o.add(*p)
				continue
			}
			img, err := idx.Image(d.Digest) // no platform or no os.version in the index: read the config
			if err != nil {
				return err
			}
			if err := o.addImage(img, d.Platform); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *Image) addImage(img v1.Image, p *v1.Platform) error {
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	platform := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, OSVersion: cf.OSVersion}
	if p != nil && platform.OS == "" {
		platform = *p
	}
	o.add(platform)
	return nil
}

func (o *Image) add(p v1.Platform) {
	if p.OS == "windows" && (p.Architecture == "amd64" || p.Architecture == "") {
		if !slices.Contains(o.Windows, p.OSVersion) {
			o.Windows = append(o.Windows, p.OSVersion)
		}
		return
	}
	s := p.OS + "/" + p.Architecture
	if !slices.Contains(o.Others, s) {
		o.Others = append(o.Others, s)
	}
}

// secretKeychain resolves registries with the credentials of kubernetes.io/dockerconfigjson and
// kubernetes.io/dockercfg Secrets, as kubelet does for imagePullSecrets (matched by registry host).
type secretKeychain []corev1.Secret

func (k secretKeychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	want := registryHost(res.RegistryStr())
	for _, s := range k {
		auths, err := dockerAuths(&s)
		if err != nil {
			return nil, fmt.Errorf("pull Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		for host, cfg := range auths {
			if registryHost(host) == want {
				return authn.FromConfig(cfg), nil
			}
		}
	}
	return authn.Anonymous, nil
}

// registryHost is the host[:port] of a docker config key (which may carry a scheme and a path),
// with Docker Hub's names made one.
func registryHost(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	s, _, _ = strings.Cut(s, "/")
	switch s {
	case "docker.io", "registry-1.docker.io", "index.docker.io":
		return name.DefaultRegistry
	}
	return s
}
