package guest

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNewReportIsBounded(t *testing.T) {
	var log strings.Builder
	for i := range 20 {
		log.WriteString(strings.Repeat("é", 100) + " line " + string(rune('a'+i)) + "\r\n")
	}
	r, data := newReport("join", StateFailed, strings.Repeat("m", 300), log.String(), 1024)
	if len(data) > 1024 || utf8.RuneCountInString(r.Message) != 256 || !strings.HasSuffix(r.LogTail, "line t") {
		t.Errorf("%d bytes, message of %d characters, log tail %q", len(data), utf8.RuneCountInString(r.Message), r.LogTail)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || back != r {
		t.Errorf("JSON %s does not round-trip: %v", data, err)
	}
	if _, data := newReport("preflight", StateRunning, "", "", 1024); string(data) != `{"step":"preflight","state":"Running","message":"","logTail":""}` {
		t.Errorf("empty report: %s", data)
	}
}
