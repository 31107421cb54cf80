// Package kubeletflags knows the command-line flags of the Windows kubelet of each Kubernetes
// minor version capwin supports, so a kubeletExtraArgs flag that a node's kubelet would refuse
// ("unknown flag", and the kubelet service never starts) is refused before a Machine boots.
//
// The sets in sets/ are not typed by hand: hack/kubelet-flags builds the kubelet's flag set as
// the kubelet does, built for windows/amd64 against each version and run under Wine, and
// `make kubelet-flags` writes its output there (test/integration/winebin checks that they still match).
package kubeletflags

import (
	"embed"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

//go:embed sets/*.txt
var setFiles embed.FS

// flagSet is one kubelet's flags: the name and its deprecation message ("" when not deprecated).
type flagSet map[string]string

// sets are the generated sets by minor version (31 for v1.31), minors their keys in order.
var sets, minors = load()

func load() (map[int]flagSet, []int) {
	entries, err := setFiles.ReadDir("sets")
	if err != nil {
		panic(fmt.Sprintf("kubeletflags: %v", err))
	}
	out := map[int]flagSet{}
	for _, e := range entries {
		minor, ok := parseMinor(strings.TrimSuffix(e.Name(), ".txt"))
		if !ok {
			panic("kubeletflags: set file name is not v1.<minor>.txt: " + e.Name())
		}
		out[minor] = parseSet(path.Join("sets", e.Name()))
	}
	return out, slices.Sorted(maps.Keys(out))
}

// parseSet reads a set file: a header line (#), then one flag a line, "name<TAB>deprecation".
func parseSet(name string) flagSet {
	b, err := setFiles.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("kubeletflags: %v", err))
	}
	out := flagSet{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		flag, deprecation, _ := strings.Cut(line, "\t")
		out[flag] = deprecation
	}
	return out
}

// parseMinor returns the minor of a Kubernetes version: 36 for v1.36, v1.36.3 or 1.36.3-rc.0.
func parseMinor(version string) (int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 || parts[0] != "1" {
		return 0, false
	}
	minor, err := strconv.Atoi(parts[1])
	return minor, err == nil && minor >= 0
}

func minorName(minor int) string { return fmt.Sprintf("v1.%d", minor) }
