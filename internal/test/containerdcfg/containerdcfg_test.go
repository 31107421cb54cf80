package containerdcfg

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestLoadLeavesTheDefaultsAlone: each Load starts from containerd's defaults. Before, Load decoded
// into the CRI plugin's registered default config, so a file that pinned its own pause image made
// that the default of the next file, and simulated guests that loaded at the same moment crashed
// the process (concurrent map writes).
func TestLoadLeavesTheDefaultsAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("plain.toml", "version = 3\n")
	pinned := write("pinned.toml", "version = 3\n[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = 'registry.example/pause:own'\n")
	before, err := Load(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Load(ctx, pinned); err != nil || got.SandboxImage() != "registry.example/pause:own" {
		t.Fatalf("pinned file: sandbox %q, %v", got.SandboxImage(), err)
	}
	after, err := Load(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if after.SandboxImage() != before.SandboxImage() {
		t.Fatalf("the default pause image became %q after another file pinned its own (was %q)", after.SandboxImage(), before.SandboxImage())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if _, err := Load(ctx, pinned); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
