package webhooks

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxPathLength keeps paths under Windows' classic MAX_PATH with room for temporary suffixes.
const maxPathLength = 240

var (
	drivePrefix = regexp.MustCompile(`^[A-Za-z]:[\\/]`)
	// reservedDevice matches the base names Windows maps to devices, whatever the extension.
	reservedDevice = regexp.MustCompile(`(?i)^(con|prn|aux|nul|com[1-9¹²³]|lpt[1-9¹²³])$`)
)

// windowsPathProblem explains why p is not an absolute Windows path naming a file or directory
// ("" if it is one). Only drive-absolute paths are accepted: relative, root-relative (\dir),
// drive-relative (C:dir), UNC (\\server\share) and device (\\?\, \\.\) paths are not.
func windowsPathProblem(p string) string {
	switch {
	case len(p) >= 2 && isSeparator(p[0]) && isSeparator(p[1]):
		return `UNC and device paths (\\server\share, \\?\, \\.\) are not supported; use a local path such as C:\k\file.txt`
	case len(p) >= 2 && p[1] == ':' && !drivePrefix.MatchString(p):
		return `drive-relative paths are not supported; write C:\dir\file, not C:dir\file`
	case !drivePrefix.MatchString(p):
		return `must be an absolute Windows path starting with a drive letter, such as C:\k\file.txt`
	case utf8.RuneCountInString(p) > maxPathLength:
		return fmt.Sprintf("must be at most %d characters", maxPathLength)
	case isSeparator(p[len(p)-1]):
		return "must not end with a path separator"
	}
	if i := strings.IndexFunc(p[2:], invalidPathRune); i >= 0 {
		r, _ := utf8.DecodeRuneInString(p[2+i:])
		return fmt.Sprintf(`must not contain %q (Windows forbids control characters and <>:"|?* in names)`, r)
	}
	for _, segment := range strings.FieldsFunc(p[3:], isSeparator[rune]) {
		if problem := segmentProblem(segment); problem != "" {
			return problem
		}
	}
	for i := 3; i < len(p); i++ {
		if isSeparator(p[i]) && isSeparator(p[i-1]) {
			return "must not contain empty path segments (two separators in a row)"
		}
	}
	return ""
}

func isSeparator[C byte | rune](c C) bool { return c == '\\' || c == '/' }

// invalidPathRune reports characters Windows does not allow in file names (the drive colon is
// not passed here).
func invalidPathRune(r rune) bool {
	return r < 0x20 || strings.ContainsRune(`<>:"|?*`, r)
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
		return fmt.Sprintf("segment %q is a reserved Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)", segment)
	}
	return ""
}

// pathKey is how Windows compares paths: case-insensitively, with / equal to \.
func pathKey(p string) string {
	return strings.ToLower(strings.ReplaceAll(p, "/", `\`))
}
