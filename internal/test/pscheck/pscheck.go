// Package pscheck checks PowerShell syntax from Go tests with the tree-sitter-powershell grammar
// (hack/pscheck, installed by `make npm` from its committed package-lock.json).
package pscheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/capwin/capwin/internal/test/repo"
)

// Problem is one syntax error reported by the parser.
type Problem struct {
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
}

// Result is the parse outcome of one file.
type Result struct {
	File   string    `json:"file"`
	Errors []Problem `json:"errors"`
}

// ToolDir is the directory of the node checker.
func ToolDir() string {
	return filepath.Join(repo.Root(), "hack", "pscheck")
}

// installed returns the checker's directory once its parser is installed.
func installed() (string, error) {
	dir := ToolDir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "tree-sitter-powershell")); err != nil {
		return "", fmt.Errorf("PowerShell parser not installed: run `make npm` (needs node and npm): %w", err)
	}
	return dir, nil
}

// Files parses the given files and returns one Result per file.
func Files(paths ...string) ([]Result, error) {
	dir, err := installed()
	if err != nil {
		return nil, err
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		abs[i] = a
	}
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "check.cjs")}, abs...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("pscheck: %w: %s", err, stderr.String())
	}
	var out []Result
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("pscheck: bad output %q: %w", stdout.String(), err)
	}
	return out, nil
}

// Source parses PowerShell text held in memory.
func Source(name, text string) (Result, error) {
	dir, err := os.MkdirTemp("", "pscheck")
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = os.RemoveAll(dir) }() // best effort: a temporary directory
	p := filepath.Join(dir, filepath.Base(name))
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		return Result{}, err
	}
	res, err := Files(p)
	if err != nil {
		return Result{}, err
	}
	res[0].File = name
	return res[0], nil
}

// String formats the problems of a result for a test failure message.
func (r Result) String() string {
	var b strings.Builder
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "%s:%d:%d: %s near %q\n", r.File, e.Line, e.Column, e.Kind, e.Text)
	}
	return b.String()
}

// Call is one command or method call of a script, in source order: the enclosing function (""
// at top level), the command or method name, its arguments as written, and the try, catch and
// finally blocks around it, outermost first.
type Call struct {
	Function string   `json:"function"`
	Name     string   `json:"name"`
	Args     []string `json:"args"`
	Blocks   []string `json:"blocks"`
	Line     int      `json:"line"`
}

// Calls lists the commands and method calls of a script, from its syntax tree.
func Calls(path string) ([]Call, error) {
	dir, err := installed()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", filepath.Join(dir, "check.cjs"), "--calls", abs)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("pscheck --calls %s: %w: %s", path, err, stderr.String())
	}
	var out []Call
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("pscheck: bad output %q: %w", stdout.String(), err)
	}
	return out, nil
}

// Find returns the first call that matches, and its index (-1 when none does).
func Find(calls []Call, match func(Call) bool) (Call, int) {
	for i, c := range calls {
		if match(c) {
			return c, i
		}
	}
	return Call{}, -1
}
