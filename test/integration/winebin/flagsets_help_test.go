package winebin

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// helpFlag is a flag's line in the kubelet's --help: "  -h, --help" or "      --address ip".
var helpFlag = regexp.MustCompile(`(?m)^ {2,8}(?:-[a-z], )?--([a-z0-9-]+)`)

// TestKubeletFlagSetsMatchKubeletHelp: the real kubelet.exe of each version the stage builds
// (scripts/windows-binaries.sh) lists in its --help the same flags as the checked-in set of its
// minor, which hack/kubelet-flags builds from the options package alone (at a patch release that
// may differ: a patch release adds or removes no flag).
func TestKubeletFlagSetsMatchKubeletHelp(t *testing.T) {
	p := NewPrefix(t)
	for _, v := range Versions(t, "kubernetes", "kubelet.exe") {
		t.Run(v, func(t *testing.T) {
			set, err := os.ReadFile(filepath.Join(setsDir, minorOf(v)+".txt"))
			if os.IsNotExist(err) {
				t.Skipf("no kubelet flag set of %s", minorOf(v))
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, line := range strings.Split(strings.TrimSpace(string(set)), "\n")[1:] {
				name, _, _ := strings.Cut(line, "\t")
				names = append(names, name)
			}
			help := kubeletHelpFlags(t, p, Exe(t, "kubernetes", v, "kubelet.exe"))
			if !slices.Equal(help, names) {
				t.Errorf("the %s kubelet's --help and %s.txt differ:\n%s", v, minorOf(v),
					lineDiff(strings.Join(names, "\n"), strings.Join(help, "\n")))
			}
		})
	}
}

// kubeletHelpFlags are the flag names a kubelet's --help lists, sorted.
func kubeletHelpFlags(t *testing.T, p *Prefix, exe string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := p.Run(ctx, exe, "--help")
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("kubelet --help: exit %d, %v:\n%s", r.ExitCode, err, r.Output())
	}
	var out []string
	for _, m := range helpFlag.FindAllStringSubmatch(r.Stdout, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}
