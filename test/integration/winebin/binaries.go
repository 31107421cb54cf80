package winebin

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/mod/semver"
)

// EnvBinaries names the folder scripts/windows-binaries.sh builds into (make test-windows sets
// it): kubernetes/<version>/{kubelet,kubeadm,kube-proxy}.exe, containerd/<version>/containerd.exe,
// flannel/<version>/flanneld.exe.
const EnvBinaries = "CAPWIN_WINDOWS_BINARIES"

// Dir is the binaries' folder; the test is skipped when the stage is not running (make test runs
// without Wine; make test-windows runs these tests).
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvBinaries)
	if dir == "" {
		t.Skipf("the Windows-binaries stage runs with make test-windows (%s is not set)", EnvBinaries)
	}
	return dir
}

// Versions are the versions of family ("kubernetes", "containerd", "flannel") that have exe,
// oldest first by Go's semantic version order of v-prefixed names.
func Versions(t testing.TB, family, exe string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(Dir(t), family, "v*", exe))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range matches {
		out = append(out, filepath.Base(filepath.Dir(m)))
	}
	sort.Slice(out, func(i, j int) bool { return semver.Compare(out[i], out[j]) < 0 })
	if len(out) == 0 {
		t.Fatalf("no %s under %s: run scripts/windows-binaries.sh", filepath.Join(family, "v*", exe), Dir(t))
	}
	return out
}

// Exe is the host path of one built program.
func Exe(t testing.TB, family, version, exe string) string {
	return filepath.Join(Dir(t), family, version, exe)
}
