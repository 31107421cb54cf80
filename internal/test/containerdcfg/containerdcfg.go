// Package containerdcfg reads a node's containerd configuration with containerd's own code: the
// config loader with the CRI image plugin's migration of version 2 files (as containerd 2.x
// starts), and the hosts.toml resolver the CRI uses for every image pull. The bootstrap tests and
// the simulated Windows guest use it to see what a real containerd would make of the files the
// bootstrap writes.
package containerdcfg

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"

	srvconfig "github.com/containerd/containerd/v2/cmd/containerd/server/config"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	dockerconfig "github.com/containerd/containerd/v2/core/remotes/docker/config"
	_ "github.com/containerd/containerd/v2/plugins/cri/images" // the CRI image plugin: its config type and its migration of version 2 files
	"github.com/containerd/plugin"
	"github.com/containerd/plugin/registry"
	"github.com/distribution/reference"
)

// criImagesURI is the CRI image plugin of containerd 2.x (version 2 files name it
// io.containerd.grpc.v1.cri).
const criImagesURI = "io.containerd.cri.v1.images"

// Images is the part of the CRI image config read here (the plugin's JSON names).
type Images struct {
	// Root and State are containerd's own directories (config.toml's root and state).
	Root         string            `json:"-"`
	State        string            `json:"-"`
	PinnedImages map[string]string `json:"pinned_images"`
	Registry     struct {
		ConfigPath string `json:"configPath"`
		Configs    map[string]struct {
			Auth *struct {
				Username string `json:"username"`
				Password string `json:"password"`
			} `json:"auth"`
		} `json:"configs"`
	} `json:"registry"`
}

// SandboxImage is the pause image the CRI pulls (pinned as "sandbox").
func (i Images) SandboxImage() string { return i.PinnedImages["sandbox"] }

// Credentials returns "user:password" of the CRI's static credentials for a host ("" = none).
func (i Images) Credentials(host string) string {
	if a := i.Registry.Configs[host].Auth; a != nil {
		return a.Username + ":" + a.Password
	}
	return ""
}

// Load reads config.toml as containerd 2.x does and decodes the CRI image plugin's part into the
// plugin's own config type.
func Load(ctx context.Context, path string) (Images, error) {
	var out Images
	all := registry.Graph(func(*plugin.Registration) bool { return false })
	cfg := srvconfig.Config{Version: 3}
	plugins := func() iter.Seq[plugin.Registration] { return slices.Values(all) }
	if err := srvconfig.LoadConfigWithPlugins(ctx, path, plugins, &cfg); err != nil {
		return out, fmt.Errorf("containerd cannot load %s: %w", path, err)
	}
	i := slices.IndexFunc(all, func(r plugin.Registration) bool { return r.URI() == criImagesURI })
	if i < 0 {
		return out, fmt.Errorf("the CRI image plugin is not registered")
	}
	reg := all[i]
	// The registration's Config is the plugin's default, shared by every Load: decode into a copy,
	// or one node's file would change the defaults of the next (and two guests decoding at once
	// would write the same maps).
	fresh, err := copyOf(reg.Config)
	if err != nil {
		return out, err
	}
	decoded, err := cfg.Decode(ctx, reg.URI(), fresh)
	if err != nil {
		return out, fmt.Errorf("decode the CRI image config: %w", err)
	}
	raw, err := json.Marshal(decoded)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, err
	}
	out.Root, out.State = cfg.Root, cfg.State
	return out, nil
}

// copyOf returns a deep copy of a plugin's default config (a pointer to a struct), through JSON,
// as the plugin's config is read and written.
func copyOf(def any) (any, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	v := reflect.New(reflect.TypeOf(def).Elem()).Interface()
	return v, json.Unmarshal(b, v)
}

// Endpoint is one host containerd tries for a pull, in order.
type Endpoint struct {
	URL          string
	Capabilities docker.HostCapabilities
	// RootCAs is nil unless hosts.toml names a CA for the endpoint.
	RootCAs    *x509.CertPool
	SkipVerify bool
	// Credentials are "user:password" from the CRI's registry configs for the endpoint's host.
	Credentials string
}

// Resolve lists the endpoints containerd tries for a registry host, reading the hosts.toml
// folders under certsDir (the local folder standing for the config's config_path).
func Resolve(ctx context.Context, images Images, certsDir, host string) ([]Endpoint, error) {
	hosts, err := dockerconfig.ConfigureHosts(ctx, dockerconfig.HostOptions{HostDir: dockerconfig.HostDirFromRoot(filepath.Clean(certsDir))})(host)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", host, err)
	}
	out := make([]Endpoint, 0, len(hosts))
	for _, h := range hosts {
		e := Endpoint{URL: h.Scheme + "://" + h.Host + h.Path, Capabilities: h.Capabilities, Credentials: images.Credentials(h.Host)}
		if tr, ok := h.Client.Transport.(*http.Transport); ok && tr.TLSClientConfig != nil {
			e.RootCAs, e.SkipVerify = tr.TLSClientConfig.RootCAs, tr.TLSClientConfig.InsecureSkipVerify
		}
		out = append(out, e)
	}
	return out, nil
}

// RegistryOf is the registry host of an image reference, as the CRI normalizes it
// ("pause:3.10" is docker.io's).
func RegistryOf(image string) (string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", image, err)
	}
	return reference.Domain(named), nil
}
