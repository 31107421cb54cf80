// Package hyperv drives Windows Server Hyper-V hosts over WinRM. Every host operation is one of
// the static PowerShell files in ps/; its only input is one JSON document and its only output one
// JSON document, so no value is ever spliced into script text.
package hyperv

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"sort"
	"strings"
)

//go:embed ps/*.ps1
var scriptFS embed.FS

// Script is one static PowerShell file.
type Script struct {
	Name string
	Text string
}

// Hash identifies a script by content (the host simulator dispatches on it).
func (s Script) Hash() string { return HashText(s.Text) }

// HashText is the SHA-256 of a script text, hex.
func HashText(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

func load(name string) Script {
	b, err := scriptFS.ReadFile("ps/" + name + ".ps1")
	if err != nil {
		panic(err) // embedded at build time
	}
	return Script{Name: name, Text: string(b)}
}

// The runner and the library every operation loads.
var (
	Runner = load("runner")
	Common = load("common")
)

// Operations.
var (
	OpHost   = load("host")
	OpFind   = load("find")
	OpCreate = load("create")
	OpPower  = load("power")
	OpJob    = load("job")
	OpRemove = load("remove")
	OpEject  = load("eject")
	OpGuest  = load("guest")
	OpLocate = load("locate")
	OpParent = load("parent")
	OpPeek   = load("peek")
)

// Scripts lists every static script (for syntax checks and the simulator).
func Scripts() []Script {
	out := []Script{Runner, Common, OpHost, OpFind, OpCreate, OpPower, OpJob, OpRemove, OpEject, OpGuest, OpLocate, OpParent, OpPeek}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(out[i].Name, out[j].Name) < 0 })
	return out
}
