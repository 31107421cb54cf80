// Package repo finds the root of the capwin checkout for tests and test tools.
package repo

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

const module = "module github.com/capwin/capwin"

// Root is the root of the capwin checkout: the directory of this source file when the binary
// was built with full paths, else (built with -trimpath, as make test does) the nearest folder
// at or above the working directory whose go.mod declares capwin's module.
func Root() string { return root() }

var root = sync.OnceValue(func() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "..", "..", "..")
	}
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && declares(b) {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
})

func declares(gomod []byte) bool {
	for _, line := range bytes.Split(gomod, []byte("\n")) {
		if string(bytes.TrimSpace(line)) == module {
			return true
		}
	}
	return false
}
