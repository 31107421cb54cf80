package winebin

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite bootstrap/pkg/kubeletflags/sets from the kubelet-flags programs of $KUBELET_FLAG_VERSIONS")

// setsDir holds the checked-in kubelet flag sets, one file per minor (v1.36.txt).
const setsDir = "../../../bootstrap/pkg/kubeletflags/sets"

// TestKubeletFlagSets: each checked-in set is what hack/kubelet-flags, built for windows/amd64
// against the kubelet version its header names, prints under Wine. With -update (make
// kubelet-flags) it writes the sets of the versions in $KUBELET_FLAG_VERSIONS and removes others.
func TestKubeletFlagSets(t *testing.T) {
	Dir(t) // skips without the binaries
	var versions []string
	if *update {
		versions = strings.Fields(os.Getenv("KUBELET_FLAG_VERSIONS"))
		if len(versions) == 0 {
			t.Fatal("-update needs KUBELET_FLAG_VERSIONS, the kubelet versions to generate sets for (make kubelet-flags sets it)")
		}
		if err := os.MkdirAll(setsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		removeOtherSets(t, versions)
	} else {
		versions = checkedInVersions(t)
	}
	p := NewPrefix(t)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			exe := Exe(t, "kubernetes", v, "kubelet-flags.exe")
			if _, err := os.Stat(exe); err != nil && !*update {
				t.Skipf("no %s: `make kubelet-flags` builds it", exe)
			}
			got := printedSet(t, p, exe, v)
			file := filepath.Join(setsDir, minorOf(v)+".txt")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s is not what the %s kubelet's flags are (run make kubelet-flags):\n%s", file, v, lineDiff(string(want), got))
			}
		})
	}
}

// printedSet runs a kubelet-flags program and checks that its header names the version.
func printedSet(t *testing.T, p *Prefix, exe, version string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := p.Run(ctx, exe)
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 {
		t.Fatalf("%s exited with %d:\n%s", exe, r.ExitCode, r.Output())
	}
	if headerVersion(r.Stdout) != version {
		t.Fatalf("%s prints the flags of kubelet %q, not %s:\n%s", exe, headerVersion(r.Stdout), version, r.Output())
	}
	return r.Stdout
}

// headerVersion is the kubelet version a set's header line names: "# kubelet v1.36.3 windows/amd64 ...".
func headerVersion(set string) string {
	header, _, _ := strings.Cut(set, "\n")
	if f := strings.Fields(header); len(f) > 2 && f[0] == "#" && f[1] == "kubelet" {
		return f[2]
	}
	return ""
}

// checkedInVersions are the kubelet versions the checked-in sets were made from.
func checkedInVersions(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(setsDir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no kubelet flag sets in %s (%v)", setsDir, err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v := headerVersion(string(b))
		if v == "" || minorOf(v)+".txt" != filepath.Base(f) {
			t.Fatalf("%s: the header does not name a kubelet version of that minor: %q", f, v)
		}
		out = append(out, v)
	}
	return out
}

// removeOtherSets removes the sets of minors not in versions.
func removeOtherSets(t *testing.T, versions []string) {
	t.Helper()
	keep := map[string]bool{}
	for _, v := range versions {
		keep[minorOf(v)+".txt"] = true
	}
	files, _ := filepath.Glob(filepath.Join(setsDir, "*.txt"))
	for _, f := range files {
		if !keep[filepath.Base(f)] {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// minorOf is the minor of a Kubernetes version: v1.36 for v1.36.3.
func minorOf(version string) string {
	parts := strings.SplitN(version, ".", 3)
	return strings.Join(parts[:min(2, len(parts))], ".")
}

// lineDiff lists the lines only one of two sets has.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
