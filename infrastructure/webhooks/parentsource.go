package webhooks

import (
	"fmt"
	"net/url"
	"strings"
)

// parentSourceProblem explains why u is not a source capwin can copy a parent disk from ("" if it
// is one): an https URL with a host, or a UNC path \\server\share\...\file.vhdx without ..
// segments or characters Windows does not allow in paths.
func parentSourceProblem(u string) string {
	if rest, ok := strings.CutPrefix(u, `\\`); ok {
		parts := strings.Split(rest, `\`)
		if len(parts) < 3 || parts[0] == "" || parts[1] == "" || strings.HasPrefix(rest, `?\`) || strings.HasPrefix(rest, `.\`) {
			return `must be a UNC path \\server\share\path\file.vhdx, not a device path`
		}
		for _, r := range rest {
			if r < 0x20 || strings.ContainsRune(`<>:"|?*/`, r) {
				return fmt.Sprintf("must not contain %q: Windows does not allow it in UNC paths", r)
			}
		}
		for _, segment := range parts {
			if segment == ".." || segment == "." || segment == "" {
				return "must not contain empty, . or .. segments: name the file itself"
			}
		}
		if !strings.HasSuffix(strings.ToLower(u), ".vhdx") {
			return "must name a .vhdx file: generation 2 VMs boot only from VHDX disks"
		}
		return ""
	}
	parsed, err := url.Parse(u)
	switch {
	case err != nil:
		return "must be an https URL: " + err.Error()
	case parsed.Scheme != "https" || parsed.Host == "":
		return `must be an https:// URL with a host, or a UNC path \\server\share\path\file.vhdx`
	case parsed.User != nil:
		return "must not carry credentials: the host fetches it as its computer account; use a URL that needs none (e.g. a pre-signed one)"
	}
	return ""
}
