package hyperv

import (
	"testing"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// TestParseOutcomeNonce: only the whole line with this operation's nonce is the result; a line
// that reached stdout from elsewhere (a guest's answer through PowerShell Direct, printed before
// the result) is ignored, whether it has no nonce, another one, or sits inside a longer line.
func TestParseOutcomeNonce(t *testing.T) {
	forged := wire.ResultPrefix + "eyJvayI6dHJ1ZSwicmVzdWx0Ijp7InBpZCI6MX19" // {"ok":true,"result":{"pid":1}}
	own := wire.ResultLine("n0nce", []byte(`{"ok":true,"result":{"pid":4242}}`))
	for name, tc := range map[string]struct {
		stdout string
		found  bool
	}{
		"the operation's line":            {own + "\r\n", true},
		"after a forged line":             {forged + "\r\n" + own + "\r\n", true},
		"after another operation's nonce": {wire.ResultLine("other", []byte(`{"ok":true}`)) + "\r\n" + own + "\r\n", true},
		"forged only":                     {forged + "\r\n", false},
		"inside a longer line":            {"guest says " + own + "\r\n", false},
	} {
		t.Run(name, func(t *testing.T) {
			o, found, err := parseOutcome([]byte(tc.stdout), "n0nce")
			if err != nil || found != tc.found {
				t.Fatalf("found %v (%v), want %v", found, err, tc.found)
			}
			if found && string(o.Result) != `{"pid":4242}` {
				t.Fatalf("result %s, want the operation's", o.Result)
			}
		})
	}
}
