// Package wire is the contract between capwin's Hyper-V client (package hyperv) and a Hyper-V
// host: the static PowerShell files in ps/ that are the host operations, the one JSON document
// each takes and the one each returns, the envelope and result line of the runner, the error
// kinds the scripts report, and the NoCloud config drive the guest reads. No value is ever
// spliced into script text. The host simulator of the tests speaks this contract too, so it
// depends on this package, not on the client.
package wire

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
	// OpGuestLogs runs the log collector in a guest (PowerShell Direct).
	OpGuestLogs = load("guestlogs")
	OpLocate    = load("locate")
	OpParent    = load("parent")
	OpPeek      = load("peek")
)

// Scripts lists every static script (for syntax checks and the simulator).
func Scripts() []Script {
	out := []Script{Runner, Common, OpHost, OpFind, OpCreate, OpPower, OpJob, OpRemove, OpEject, OpGuest, OpGuestLogs, OpLocate, OpParent, OpPeek}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(out[i].Name, out[j].Name) < 0 })
	return out
}
