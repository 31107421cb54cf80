package guestos

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseReport: whatever a guest writes to its status value, ParseReport returns a clear
// error or a status within the API's bounds, and a parsed status written back parses the same.
func FuzzParseReport(f *testing.F) {
	for _, seed := range []string{
		`{"step":"containerd","state":"Running","message":"installing","logTail":"..."}`,
		`{"step":"finish","state":"Succeeded"}`,
		`{"step":"join","state":"Failed","message":"kubeadm join failed","logTail":"` + strings.Repeat("é", 600) + `"}`,
		`{"step":"features","state":"Rebooting","message":"\u0000\ud800"}`,
		`{"state":"Hacked"}`, `not json`, "{\"state\":\"Running\",\"step\":\"\xff\"}", `null`, `[]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r, err := ParseReport(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "guest status report ") {
				t.Fatalf("unclear error %q", err)
			}
			return
		}
		switch r.State {
		case ReportRunning, ReportRebooting, ReportFailed, ReportSucceeded:
		default:
			t.Fatalf("state %q accepted", r.State)
		}
		for name, v := range map[string]struct {
			s   string
			max int
		}{"step": {r.Step, 64}, "message": {r.Message, 1024}, "logTail": {r.LogTail, 1024}} {
			if len(v.s) > v.max || !utf8.ValidString(v.s) {
				t.Fatalf("%s is %d bytes or not UTF-8: %q", name, len(v.s), v.s)
			}
		}
		again, _ := json.Marshal(map[string]string{"step": r.Step, "state": r.State, "message": r.Message, "logTail": r.LogTail})
		if back, err := ParseReport(string(again)); len(again) <= MaxReportBytes && (err != nil || back != r) {
			t.Fatalf("%+v written back parses as %+v, %v", r, back, err)
		}
	})
}
