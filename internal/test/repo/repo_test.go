package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootHoldsCapwinsGoMod(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(Root(), "go.mod"))
	if err != nil || !declares(b) {
		t.Fatalf("Root() = %s: go.mod %v", Root(), err)
	}
}

func TestDeclares(t *testing.T) {
	for in, want := range map[string]bool{
		"module github.com/capwin/capwin\n\ngo 1.26\n":  true,
		"// c\nmodule github.com/capwin/capwin\r\n":     true,
		"module github.com/capwin/capwin/hack/images\n": false,
		"module capwin.local/build\nrequire x v1\n":     false,
	} {
		if got := declares([]byte(in)); got != want {
			t.Errorf("declares(%q) = %v", in, got)
		}
	}
}
