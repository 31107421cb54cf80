package guest

import (
	_ "embed"
	"strings"
)

//go:embed ps/collect.ps1
var collectScript string

// CollectScript is the static log collector (for syntax checks and the simulated guest).
func CollectScript() string { return collectScript }

// What the collector reads. The folder of the bootstrap data (GuestDir) is never read whole: it
// holds the bootstrap script with the join token while the bootstrap runs.
var (
	collectDirectories = []string{`C:\var\log`, `C:\Program Files\Cloudbase Solutions\Cloudbase-Init\log`}
	collectFiles       = []string{GuestLaunchLog, `C:\var\lib\capwin\steps.done`}
	collectEventLogs   = []string{"System", "Application"}
)

// Limits of one collection: the archive ends in a Secret (1 MiB at most, with its other keys).
const (
	collectMaxEvents       = 500
	collectMaxFileBytes    = 2 << 20
	CollectMaxArchiveBytes = 768 << 10
)

// Collect is the log collector's data document. Every field is always present (the script runs
// in strict mode): lists are empty, never null.
type Collect struct {
	Version int `json:"version"`
	// Work is the collector's own folder, emptied and removed when it is done; Output the zip
	// it leaves (the caller copies it out and deletes it).
	Work   string `json:"work"`
	Output string `json:"output"`
	// Directories are read with their sub-folders, Files one by one: the last MaxFileBytes of
	// each (halved until the archive fits in MaxArchiveBytes).
	Directories     []string `json:"directories"`
	Files           []string `json:"files"`
	EventLogs       []string `json:"eventLogs"`
	MaxEvents       int      `json:"maxEvents"`
	MaxFileBytes    int64    `json:"maxFileBytes"`
	MaxArchiveBytes int64    `json:"maxArchiveBytes"`
}

// CollectPaths are where one collection's files are in the guest.
type CollectPaths struct {
	Script, Work, Output string
}

// PathsOfCollect are the guest paths of the collection with request id id (validated by the
// caller: letters, digits and hyphens).
func PathsOfCollect(id string) CollectPaths {
	base := GuestDir + `\collect-` + id
	return CollectPaths{Script: base + ".ps1", Work: base, Output: base + ".zip"}
}

// NewCollect is the document of the collection with request id id.
func NewCollect(id string) Collect {
	p := PathsOfCollect(id)
	return Collect{Version: 1, Work: p.Work, Output: p.Output,
		Directories: append([]string{}, collectDirectories...), Files: append([]string{}, collectFiles...),
		EventLogs: append([]string{}, collectEventLogs...), MaxEvents: collectMaxEvents,
		MaxFileBytes: collectMaxFileBytes, MaxArchiveBytes: CollectMaxArchiveBytes}
}

// Script renders the collector: one line assigning the document as base64, then the static script.
func (c Collect) Script() ([]byte, error) { return render("CapwinCollect", c, collectScript) }

// CollectArgs are the arguments of Windows PowerShell that run the collector at path.
func CollectArgs(path string) string {
	return `-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "` + path + `"`
}

// ParseCollect reads the document back from a rendered collector (the simulated guest, tests).
func ParseCollect(script []byte) (Collect, error) {
	var c Collect
	return c, parse(script, "CapwinCollect", "log collector", &c)
}

// ArchiveName is the name a guest file has in the collector's zip: files/ and its path without
// the drive's colon, with forward slashes (C:\var\log\kubelet\kubelet.log is
// files/C/var/log/kubelet/kubelet.log).
func ArchiveName(path string) string {
	return "files/" + strings.ReplaceAll(strings.Replace(path, ":", "", 1), `\`, "/")
}
