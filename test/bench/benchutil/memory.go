// Package benchutil holds what the benchmark commands under test/bench share.
package benchutil

import (
	"os"
	"strings"
)

// Memory reads the process's resident set and its peak from /proc.
func Memory() (rss, peak string) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "n/a", "n/a"
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss = f[1] + " kB"
		case "VmHWM:":
			peak = f[1] + " kB"
		}
	}
	return rss, peak
}
