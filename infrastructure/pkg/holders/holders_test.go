package holders

import (
	"slices"
	"testing"
)

func TestHolders(t *testing.T) {
	var h Holders
	if got := h.Hold("ns/a", "k1"); got != "" {
		t.Fatalf("first hold returned %q", got)
	}
	h.Hold("ns/b", "k1")
	if got := h.Hold("ns/a", "k2"); got != "" {
		t.Fatalf("k1 is still held by ns/b, got %q", got)
	}
	if got := h.Hold("ns/a", "k2"); got != "" {
		t.Fatalf("holding the same key again returned %q", got)
	}
	if got := h.Hold("ns/b", "k2"); got != "k1" {
		t.Fatalf("the last holder of k1 moved on: want k1, got %q", got)
	}
	if got := h.Release("ns/a"); got != nil {
		t.Fatalf("k2 is still held by ns/b, got %v", got)
	}
	if got := h.Release("ns/b"); !slices.Equal(got, []string{"k2"}) {
		t.Fatalf("want [k2], got %v", got)
	}
	if h.Len() != 0 || h.Used("k2") {
		t.Fatalf("holders left: %d", h.Len())
	}
}

func TestReleaseByPrefix(t *testing.T) {
	var h Holders
	h.Hold("ns/c/hv1", "a")
	h.Hold("ns/c/hv2", "b")
	h.Hold("ns/cc/hv1", "c")
	got := h.Release("ns/c")
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("want [a b], got %v", got)
	}
	if !h.Used("c") {
		t.Fatal("ns/cc is not ns/c's host")
	}
}
