package guest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// SandboxPull is where the guest's containerd pulls its pause image from (zero until the
// bootstrap's containerd step ran).
func (g *Guest) SandboxPull() ImagePull {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sandboxPull
}

// startContainerd is containerd (re)starting with the files on the guest's disk: a config it
// cannot load stops the step, as Restart-Service would. It then resolves the pause image's
// registry the way the CRI does for its first pull.
func (s *script) startContainerd(ctx context.Context, dir string) error {
	tmp, err := os.MkdirTemp("", "guest-containerd-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	prefix := fold(dir) + `\`
	for path, data := range s.g.fs.under(prefix) {
		local := filepath.Join(tmp, filepath.FromSlash(strings.ReplaceAll(strings.TrimPrefix(path, prefix), `\`, "/")))
		if err := os.MkdirAll(filepath.Dir(local), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(local, data, 0o600); err != nil {
			return err
		}
	}
	config := filepath.Join(tmp, filepath.Base(strings.ReplaceAll(s.doc.Containerd.ConfigPath, `\`, "/")))
	// What containerd says while it reads its config (a version 2 file's migration, say) goes to
	// its log file on the node, as the service's --log-file keeps it, not to the harness's stderr.
	images, err := containerdcfg.Load(clog.WithLogger(ctx, s.g.containerdLogger()), config)
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
