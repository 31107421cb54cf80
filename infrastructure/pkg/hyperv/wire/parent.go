package wire

import "strings"

// ParentInput is parent.ps1's input: the host's disk folder (the copy goes to its parents
// subfolder) and the source with its SHA-256.
type ParentInput struct {
	DiskPath string `json:"diskPath"`
	URL      string `json:"url"`
	SHA256   string `json:"sha256"`
}

// States of a parent disk copy on a host (ParentState.State).
const (
	ParentReady   = "ready"
	ParentCopying = "copying"
	ParentFailed  = "failed"
)

// ParentState is parent.ps1's result. A failed copy has the kind InvalidSpec when the file's hash
// differed from the spec's, Failed when the copy itself failed; it is reported once, and the next
// ask starts a new copy.
type ParentState struct {
	State   string `json:"state"`
	Path    string `json:"path"`
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message,omitempty"`
}

// ParentCachePath is where a host keeps the verified copy of a parent disk source: named by its
// content hash, so a copy is never changed and every machine with that hash shares it.
func ParentCachePath(diskPath, sha256 string) string {
	return strings.TrimRight(diskPath, `\`) + `\parents\` + strings.ToLower(sha256) + ".vhdx"
}
