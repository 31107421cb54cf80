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

// TestKubeletFlagSetsMatchKubeletHelp: where the stage has the real kubelet.exe of a set's
// version (scripts/windows-binaries.sh), its --help lists the same flags as the set, which
// hack/kubelet-flags builds from the options package alone: the two registrations agree.
func TestKubeletFlagSetsMatchKubeletHelp(t *testing.T) {
	Dir(t) // skips without the binaries
	p := NewPrefix(t)
	for _, v := range checkedInVersions(t) {
		t.Run(v, func(t *testing.T) {
			exe := Exe(t, "kubernetes", v, "kubelet.exe")
			if _, err := os.Stat(exe); err != nil {
				t.Skipf("no %s", exe)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			r, err := p.Run(ctx, exe, "--help")
			if err != nil || r.ExitCode != 0 {
				t.Fatalf("kubelet --help: exit %d, %v:\n%s", r.ExitCode, err, r.Output())
			}
			var help []string
			for _, m := range helpFlag.FindAllStringSubmatch(r.Stdout, -1) {
				help = append(help, m[1])
			}
			set, err := os.ReadFile(filepath.Join(setsDir, minorOf(v)+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, line := range strings.Split(strings.TrimSpace(string(set)), "\n")[1:] {
				name, _, _ := strings.Cut(line, "\t")
				names = append(names, name)
			}
			slices.Sort(help)
			if !slices.Equal(help, names) {
				t.Errorf("the %s kubelet's --help and %s.txt differ:\n%s", v, minorOf(v),
					lineDiff(strings.Join(names, "\n"), strings.Join(help, "\n")))
			}
		})
	}
}
