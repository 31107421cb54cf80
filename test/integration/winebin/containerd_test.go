package winebin

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/semver"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// nativeConfigVersion is the config.toml version a containerd release reads without converting.
func nativeConfigVersion(release string) int {
	switch {
	case semver.Compare(release, "v2.3.0") >= 0:
		return 4
	case semver.Compare(release, "v2.1.0") >= 0:
		return 3
	}
	return 2
}

// TestContainerdLoadsConfig: each containerd of the stage loads the config.toml of every matrix
// entry written for a release it can read (containerd reads older versions, never newer), and
// shows the pause image, its directories and the registries' hosts folder; the config written
// for its own release is read as it is, without "Configuration migrated".
func TestContainerdLoadsConfig(t *testing.T) {
	c := newCluster(t)
	for _, release := range Versions(t, "containerd", "containerd.exe") {
		for _, cfg := range matrix {
			t.Run(release+"/"+cfg.name, func(t *testing.T) {
				spec := c.spec(t, cfg)
				doc := c.render(t, spec, "v1.36.3")
				version := configVersion(t, doc.Containerd.Config)
				if version > nativeConfigVersion(release) {
					t.Skipf("config version %d is for a newer containerd than %s", version, release)
				}
				p := NewPrefix(t)
				c.lay(t, p, doc)
				// With the --log-file capwin gives the service (a flag of containerd on Windows).
				out := run(t, p, Exe(t, "containerd", release, "containerd.exe"), "--config", doc.Containerd.ConfigPath,
					"--log-file="+doc.Containerd.LogFile, "config", "dump")
				out.mustSucceed(t)
				dump := out.Stdout
				for _, want := range []string{spec.Containerd.PauseImage, userdata.CertsDir, spec.Containerd.Root, spec.Containerd.State} {
					if want != "" && !strings.Contains(dump, want) && !strings.Contains(dump, strings.ReplaceAll(want, `\`, `\\`)) {
						t.Errorf("containerd %s's dump lacks %s:\n%s", release, want, dump)
					}
				}
				if migrated := strings.Contains(out.Stderr, "migrated"); migrated && version == nativeConfigVersion(release) {
					t.Errorf("containerd %s converted a version %d config (its own):\n%s", release, version, out.Stderr)
				}
			})
		}
	}
}

func configVersion(t *testing.T, toml string) int {
	t.Helper()
	for _, v := range []int{2, 3, 4} {
		if strings.HasPrefix(toml, fmt.Sprintf("version = %d\n", v)) {
			return v
		}
	}
	t.Fatalf("config.toml has no version line first:\n%s", toml)
	return 0
}
