package guest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	clog "github.com/containerd/log"

	"github.com/capwin/capwin/internal/test/containerdcfg"
)

// ImagePull is where containerd on the guest pulls an image from, as containerd's own resolver
// reads the config and hosts.toml folders the bootstrap wrote.
type ImagePull struct {
	Image     string
	Endpoints []containerdcfg.Endpoint
}

// PrePulled are the images the bootstrap's prePull step pulled, with where containerd pulled
// each from (its hosts.toml folders, as ctr --hosts-dir reads them).
func (g *Guest) PrePulled() []ImagePull {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.pulled)
}

// SandboxPull is where the guest's containerd pulls its pause image from (zero until the
// bootstrap's containerd step ran).
func (g *Guest) SandboxPull() ImagePull {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sandboxPull
}

// containerdFiles copies containerd's folder (config.toml, certs.d) from the guest's disk into a
// temporary local folder, which the caller removes.
func (s *script) containerdFiles(dir string) (string, error) {
	tmp, err := os.MkdirTemp("", "guest-containerd-")
	if err != nil {
		return "", err
	}
	prefix := fold(dir) + `\`
	for path, data := range s.g.fs.under(prefix) {
		local := filepath.Join(tmp, filepath.FromSlash(strings.ReplaceAll(strings.TrimPrefix(path, prefix), `\`, "/")))
		if err := errors.Join(os.MkdirAll(filepath.Dir(local), 0o700), os.WriteFile(local, data, 0o600)); err != nil {
			_ = os.RemoveAll(tmp)
			return "", err
		}
	}
	return tmp, nil
}

// loadContainerd reads containerd's config from a containerdFiles folder. What containerd says
// while it reads it (a version 2 file's migration, say) goes to its log file on the node, as the
// service's --log-file keeps it, not to the harness's stderr.
func (s *script) loadContainerd(ctx context.Context, tmp string) (containerdcfg.Images, error) {
	config := filepath.Join(tmp, filepath.Base(strings.ReplaceAll(s.doc.Containerd.ConfigPath, `\`, "/")))
	return containerdcfg.Load(clog.WithLogger(ctx, s.g.containerdLogger()), config)
}

// startContainerd is containerd (re)starting with the files on the guest's disk: a config it
// cannot load stops the step, as Restart-Service would. It then resolves the pause image's
// registry the way the CRI does for its first pull.
func (s *script) startContainerd(ctx context.Context, dir string) error {
	tmp, err := s.containerdFiles(dir)
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	prefix := fold(dir) + `\`
	images, err := s.loadContainerd(ctx, tmp)
	if err != nil {
		return fmt.Errorf("service containerd does not start: %w", err)
	}
	for _, dir := range []string{images.Root, images.State} {
		if !s.g.onVolume(dir) {
			return fmt.Errorf("service containerd does not start: %s is on no volume of this computer", dir)
		}
	}
	certs, ok := strings.CutPrefix(fold(images.Registry.ConfigPath), prefix)
	if !ok {
		return fmt.Errorf("config_path %q is outside %s", images.Registry.ConfigPath, dir)
	}
	host, err := containerdcfg.RegistryOf(images.SandboxImage())
	if err != nil {
		return err
	}
	endpoints, err := containerdcfg.Resolve(ctx, images, filepath.Join(tmp, certs), host)
	if err != nil {
		return err
	}
	var urls []string
	for _, e := range endpoints {
		urls = append(urls, e.URL)
	}
	s.log(fmt.Sprintf("containerd pulls %s from %s", images.SandboxImage(), strings.Join(urls, ", ")))
	s.g.mu.Lock()
	s.g.sandboxPull = ImagePull{Image: images.SandboxImage(), Endpoints: endpoints}
	s.g.mu.Unlock()
	return nil
}
