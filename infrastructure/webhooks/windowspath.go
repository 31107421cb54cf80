package webhooks

import (
	"fmt"
	"strings"
)

// windowsPathProblem explains why p is not an absolute path on a local drive of a Windows host
// ("" if it is one). Hyper-V gets the path on every host: it must not depend on a current
// directory, and a UNC share would need the host to pass capwin's credentials on (a second hop).
func windowsPathProblem(p string) string {
	switch {
	case strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//"):
		return `must be a path on a local drive of the hosts, not a UNC or device path (\\server\share, \\?\...)`
	case len(p) < 3 || !isDriveLetter(p[0]) || p[1] != ':' || (p[2] != '\\' && p[2] != '/'):
		return `must be an absolute path that starts with a drive letter, e.g. D:\Hyper-V\capwin`
	}
	for _, r := range p[2:] {
		if r < 0x20 || strings.ContainsRune(`<>:"|?*`, r) {
			return fmt.Sprintf("must not contain %q: Windows does not allow it in paths", r)
		}
	}
	for _, segment := range strings.FieldsFunc(p, func(r rune) bool { return r == '\\' || r == '/' }) {
		if segment == ".." {
			return "must not contain .. segments: name the folder itself"
		}
	}
	return ""
}

// vhdxPathProblem is windowsPathProblem for the parent disk, which must be a VHDX file.
func vhdxPathProblem(p string) string {
	if problem := windowsPathProblem(p); problem != "" {
		return problem
	}
	if !strings.HasSuffix(strings.ToLower(p), ".vhdx") {
		return "must name a .vhdx file: generation 2 VMs boot only from VHDX disks"
	}
	return ""
}

func isDriveLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
