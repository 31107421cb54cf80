package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// goSource is a Go main package of another module, built as that module's release does.
type goSource struct {
	module, version string
	pkg             string   // the main package
	ldflags         []string // besides -s -w
	// staging: the module replaces its staging modules with ./staging folders (k8s.io/kubernetes),
	// which a module that requires it must pin to their published versions itself.
	staging string
	// requires are other modules the build module pins ("path version"), for a module whose
	// own go.mod replaces them with folders of its own.
	requires []string
	// root, when set, is a module on disk (this repository) to build pkg in, instead of a
	// published module and version.
	root string
}

var stagingReplace = regexp.MustCompile(`(?m)^\s*(k8s\.io/[a-z0-9-]+) => \./staging/`)

// buildGo builds src for goos/goarch into out, in a throwaway module that requires src.module
// (GOFLAGS=-mod=mod lets go resolve and record the dependencies): trimmed paths, no cgo, no
// VCS stamp, so the same version gives the same binary.
func buildGo(ctx context.Context, src goSource, goos, goarch, out string) error {
	dir, flags := src.root, "GOFLAGS=-mod=readonly"
	if dir == "" {
		tmp, err := os.MkdirTemp("", "capwin-gobuild")
		if err != nil {
			return err
		}
		defer removeTemp(tmp)
		if err := writeBuildModule(ctx, src, tmp); err != nil {
			return err
		}
		dir, flags = tmp, "GOFLAGS=-mod=mod"
	}
	ld := append([]string{"-s", "-w", "-buildid="}, src.ldflags...)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", strings.Join(ld, " "), "-o", out, src.pkg) //nolint:gosec // G204: the go command, on the module and package this build was asked for
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", flags, "GOWORK=off")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s@%s: %w", src.pkg, src.version, err)
	}
	return nil
}

// writeBuildModule writes the throwaway module that requires src.module into dir.
func writeBuildModule(ctx context.Context, src goSource, dir string) error {
	mod := fmt.Sprintf("module capwin.local/build\n\ngo 1.26\n\nrequire %s %s\n", src.module, src.version)
	for _, r := range src.requires {
		mod += "require " + r + "\n"
	}
	if src.staging != "" {
		replaces, err := stagingReplaces(ctx, src)
		if err != nil {
			return err
		}
		mod += replaces
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644)
}

// stagingReplaces are replace directives pinning the staging modules of src.module to src.staging.
func stagingReplaces(ctx context.Context, src goSource) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", src.module+"@"+src.version) //nolint:gosec // G204: the go command, on the module this build was asked for
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", src.module, src.version, err)
	}
	m := regexp.MustCompile(`"GoMod": "([^"]+)"`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("go mod download %s@%s: no go.mod", src.module, src.version)
	}
	gomod, err := os.ReadFile(string(m[1]))
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, r := range stagingReplace.FindAllSubmatch(gomod, -1) {
		fmt.Fprintf(&out, "replace %s => %s %s\n", r[1], r[1], src.staging)
	}
	return out.String(), nil
}
