// Package preflight finds the Windows workloads of a cluster that will not start on nodes of a
// new Windows build: a process-isolated Windows container runs only on a host of the build its
// image was made for, so before a Windows Server 2022 -> 2025 rollout every Windows Pod template's
// images are read from their registry (their manifests' os.version) and held against the target
// build and the template's isolation (docs/upgrades.md).
package preflight

import (
	"fmt"
	"strconv"
	"strings"
)

// Build is a Windows build: 10.0.<Number>.
type Build struct {
	Number int
}

// The Windows Server releases a target can be named by.
var releases = []struct {
	names  []string
	number int
}{
	{[]string{"ltsc2019", "2019"}, 17763},
	{[]string{"ltsc2022", "2022"}, 20348},
	{[]string{"ltsc2025", "2025"}, 26100},
}

// ParseBuild reads a target build: a release (ltsc2022, ltsc2025, 2022, 2025), a build as kubelet
// labels nodes with it (10.0.26100, node.kubernetes.io/windows-build), an os.version
// (10.0.26100.1742) or a build number (26100).
func ParseBuild(s string) (Build, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	for _, r := range releases {
		for _, n := range r.names {
			if v == n {
				return Build{Number: r.number}, nil
			}
		}
	}
	if b, ok := buildOf(v); ok {
		return b, nil
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return Build{Number: n}, nil
	}
	return Build{}, fmt.Errorf("target build %q: give ltsc2022, ltsc2025, a build such as 10.0.26100, or its number", s)
}

// buildOf reads the build of an os.version or windows-build label: 10.0.<build>[.<revision>].
func buildOf(osVersion string) (Build, bool) {
	parts := strings.Split(osVersion, ".")
	if len(parts) < 3 || len(parts) > 4 || parts[0] != "10" || parts[1] != "0" {
		return Build{}, false
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n <= 0 {
		return Build{}, false
	}
	return Build{Number: n}, true
}

// Label is the build as kubelet writes it in the node label node.kubernetes.io/windows-build.
func (b Build) Label() string { return fmt.Sprintf("10.0.%d", b.Number) }

// String is the build with its release name when it has one: 10.0.26100 (ltsc2025).
func (b Build) String() string {
	for _, r := range releases {
		if r.number == b.Number {
			return fmt.Sprintf("%s (%s)", b.Label(), r.names[0])
		}
	}
	return b.Label()
}
