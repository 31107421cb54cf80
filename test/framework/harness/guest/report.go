package guest

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Report is one bootstrap status report, field for field the JSON of bootstrap.ps1's Send-Status.
type Report struct {
	Step    string `json:"step"`
	State   string `json:"state"`
	Message string `json:"message"`
	LogTail string `json:"logTail"`
	// At is when the guest wrote the report (not in the JSON).
	At time.Time `json:"-"`
}

// newReport bounds a report as Send-Status does: the last 6 log lines, at most 512 characters of
// them, a message of at most 256 characters, then the log tail shortened 64 characters at a time
// until the JSON fits maxBytes (a Hyper-V KVP item holds 1024 bytes).
func newReport(step, state, message, log string, maxBytes int) (Report, []byte) {
	lines := strings.Split(strings.TrimRight(log, "\r\n"), "\r\n")
	if log == "" {
		lines = nil
	}
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	r := Report{Step: step, State: state, Message: headChars(message, 256), LogTail: tailChars(strings.Join(lines, "\n"), 512)}
	data, _ := json.Marshal(r)
	for len(data) > maxBytes && r.LogTail != "" {
		r.LogTail = dropChars(r.LogTail, 64)
		data, _ = json.Marshal(r)
	}
	return r, data
}

// headChars keeps the first n characters of s.
func headChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// tailChars keeps the last n characters of s.
func tailChars(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}

// dropChars removes the first n characters of s.
func dropChars(s string, n int) string {
	r := []rune(s)
	return string(r[min(n, len(r)):])
}
