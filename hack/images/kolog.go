package main

import (
	"bytes"
	"io"
)

// koNoTagNotice is what ko prints (through the standard logger) for each image of a clone without
// git tags. The images do not use ko's git template values (their version is a flag), so a fresh
// clone's make release would repeat a warning that changes nothing.
var koNoTagNotice = []byte("git doesn't contain any tags")

// quietKo passes the standard logger's lines to w, except koNoTagNotice.
type quietKo struct{ w io.Writer }

func (q quietKo) Write(p []byte) (int, error) {
	if bytes.Contains(p, koNoTagNotice) {
		return len(p), nil
	}
	return q.w.Write(p)
}
