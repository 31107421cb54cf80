package webhooks

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParentSourceProblem: whatever the webhook accepts is an https URL with a host and no
// credentials, or a UNC path \\server\share\...\file.vhdx without empty, . or .. segments.
func FuzzParentSourceProblem(f *testing.F) {
	for _, s := range []string{`\\fs01\images\win.vhdx`, `\\?\C:\win.vhdx`, `\\fs01\..\x.vhdx`, "https://images/win.vhdx?sig=1",
		"https://u:p@h/x", "http://h/x", "", `\\a\b\c\d.VHDX`, "https:///x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if parentSourceProblem(u) != "" {
			return
		}
		if rest, ok := strings.CutPrefix(u, `\\`); ok {
			parts := strings.Split(rest, `\`)
			if len(parts) < 3 || !strings.HasSuffix(strings.ToLower(u), ".vhdx") || strings.ContainsAny(rest, `/:?*"<>|`) {
				t.Fatalf("accepted %q", u)
			}
			for _, p := range parts {
				if p == "" || p == "." || p == ".." {
					t.Fatalf("accepted %q with segment %q", u, p)
				}
			}
			return
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.Scheme != "https" || parsed.Host == "" || parsed.User != nil {
			t.Fatalf("accepted %q", u)
		}
	})
}
