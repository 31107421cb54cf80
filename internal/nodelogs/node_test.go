package nodelogs

import (
	"strings"
	"testing"
)

// TestTailBufferKeepsTheEnd: past its size only the last bytes stay, under a line that says so;
// below it everything stays as written.
func TestTailBufferKeepsTheEnd(t *testing.T) {
	small := &tailBuffer{max: 100}
	_, _ = small.Write([]byte("short"))
	if got := string(small.bytes()); got != "short" {
		t.Errorf("below the limit: %q", got)
	}
	big := &tailBuffer{max: 10}
	for i := range 50 {
		_, _ = big.Write([]byte{byte('a' + i%26)})
	}
	got := string(big.bytes())
	if !strings.HasPrefix(got, "[capwin: only the last 10 bytes are kept]\n") || !strings.HasSuffix(got, "opqrstuvwx") {
		t.Errorf("past the limit: %q", got)
	}
}

// TestHrefs reads the entries of a listing of Go's file server, escaped names included.
func TestHrefs(t *testing.T) {
	page := "<!doctype html>\n<pre>\n<a href=\"capwin/\">capwin/</a>\n<a href=\"kubelet%20old.log\">kubelet old.log</a>\n</pre>\n"
	var names []string
	for _, m := range hrefs.FindAllStringSubmatch(page, -1) {
		names = append(names, m[1])
	}
	if strings.Join(names, ",") != "capwin/,kubelet%20old.log" {
		t.Errorf("entries %v", names)
	}
}
