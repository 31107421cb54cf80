package webhooks

import (
	"fmt"
	"regexp"
	"strings"
)

// maxPathLength keeps paths under Windows' classic MAX_PATH with room for temporary suffixes.
const maxPathLength = 240

var (
	drivePrefix    = regexp.MustCompile(`^[A-Za-z]:[\\/]`)
	reservedDevice = regexp.MustCompile(`(?i)^(con|prn|aux|nul|com[1-9]|lpt[1-9])$`)
)

// windowsPathProblem explains why p is not an absolute Windows path to a file or directory ("" if
// it is one). Only drive-absolute paths are accepted: relative, drive-relative (C:foo), UNC
// (\\server\share) and device (\\?\, \\.\) paths are not.
func windowsPathProblem(p string) string {
	switch {
	case strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, `//`):
		return "UNC and device paths are not supported; use a local path such as C:\\k\\file.txt"
	case len(p) >= 2 && p[1] == ':' && !drivePrefix.MatchString(p):
		return "drive-relative paths are not supported; write C:\\dir\\file, not C:dir\\file"
	case !drivePrefix.MatchString(p):
		return "must be an absolute Windows path such as C:\\k\\file.txt"
	case len(p) > maxPathLength:
		return fmt.Sprintf("must be at most %d characters", maxPathLength)
	case strings.HasSuffix(p, `\`) || strings.HasSuffix(p, "/"):
		return "must not end with a path separator"
	}
	for _, r := range p[2:] {
		if r < 0x20 || strings.ContainsRune(`<>:"|?*`, r) {
			return fmt.Sprintf("must not contain %q (Windows forbids control characters and <>:\"|?* in names)", r)
		}
	}
	for _, segment := range strings.FieldsFunc(p[3:], func(r rune) bool { return r == '\\' || r == '/' }) {
		if problem := segmentProblem(segment); problem != "" {
			return problem
		}
	}
	if strings.Contains(p[3:], `\\`) || strings.Contains(p[3:], "//") || strings.Contains(p[3:], `\/`) || strings.Contains(p[3:], `/\`) {
		return "must not contain empty path segments"
	}
	return ""
}

func segmentProblem(segment string) string {
	switch {
	case segment == "." || segment == "..":
		return "must not contain . or .. segments"
	case strings.HasSuffix(segment, " ") || strings.HasSuffix(segment, "."):
		return fmt.Sprintf("segment %q ends with a space or a dot, which Windows strips", segment)
	}
	base, _, _ := strings.Cut(segment, ".")
	if reservedDevice.MatchString(strings.TrimRight(base, " ")) {
		return fmt.Sprintf("segment %q is a reserved Windows device name", segment)
	}
	return ""
}

// pathKey is how Windows compares paths: case-insensitively, with / equal to \.
func pathKey(p string) string {
	return strings.ToLower(strings.ReplaceAll(p, "/", `\`))
}
