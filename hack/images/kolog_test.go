package main

import (
	"bytes"
	"log"
	"testing"
)

// TestQuietKo: ko's notice about a clone without tags is dropped, every other line kept.
func TestQuietKo(t *testing.T) {
	var out bytes.Buffer
	l := log.New(quietKo{&out}, "", 0)
	l.Printf("%v", "git doesn't contain any tags. Tag info will not be available")
	l.Printf("building %s", "x")
	if got := out.String(); got != "building x\n" {
		t.Fatalf("logged %q", got)
	}
}
