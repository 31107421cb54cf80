package webhooks

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// parentSourceProblem explains why u is not a source capwin can copy a parent disk from ("" if it
// is one): an https URL with a host other than the host itself, or a UNC path
// \\server\share\...\file.vhdx on a file server named by DNS name, without .. segments or
// characters Windows does not allow in paths.
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
		return uncServerProblem(parts[0])
	}
	parsed, err := url.Parse(u)
	switch {
	case err != nil:
		return "must be an https URL: " + err.Error()
	case parsed.Scheme != "https" || parsed.Host == "":
		return `must be an https:// URL with a host, or a UNC path \\server\share\path\file.vhdx`
	case parsed.User != nil:
		return "must not carry credentials: the host fetches it as its computer account; use a URL that needs none (e.g. a pre-signed one)"
	case loopback(parsed.Hostname()):
		return "must not name the host itself (" + parsed.Hostname() + "): a parent disk comes from an image server"
	}
	return ""
}

// uncServerProblem explains why the server of a UNC path is not a file server the hosts' computer
// accounts may be sent to ("" if it is one): the copy authenticates there as the host.
func uncServerProblem(server string) string {
	lower := strings.ToLower(strings.Trim(server, "[]"))
	switch {
	case strings.Contains(lower, "@"):
		return "must not name a port or protocol (" + server + "): the share is reached over SMB only, as the host's computer account"
	case loopback(lower):
		return "must not name the host itself (" + server + "): that would read the host's own files as LocalSystem"
	case strings.HasSuffix(lower, ".ipv6-literal.net") || isIP(lower):
		return "must name the file server by its DNS name, not an IP address (" + server + "): with an address the host's computer account logs on with NTLM to whatever answers there"
	}
	return ""
}

// loopback reports whether a host name or address is the local machine.
func loopback(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && (a.IsLoopback() || a.IsUnspecified())
}

func isIP(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}
