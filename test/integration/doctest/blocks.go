// Package doctest reads the code blocks of capwin's Markdown docs so that a test can run them.
//
// Every shell or YAML block of a tested page carries a marker comment on the line before its
// fence, which says what the test does with it:
//
//	<!-- doctest: run -->          a shell block: run in order, in one shell, as a reader would
//	<!-- doctest: file NAME -->    a YAML block: written to NAME (a later block reads it) and checked
//	<!-- doctest: check -->        a YAML block: checked by a server-side dry run
//	<!-- doctest: skip REASON -->  not run (REASON says why); its commands' flags are still checked
//
// A block without a marker is an error, so a new block is tested or says why it is not.
package doctest

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Kinds of marker.
const (
	Run   = "run"
	File  = "file"
	Check = "check"
	Skip  = "skip"
)

// Block is one fenced code block of a Markdown page.
type Block struct {
	Page string // the page's path, as given to Parse
	Line int    // line of the opening fence (1-based)
	Lang string // sh, yaml, ...
	Kind string // Run, File, Check or Skip
	Arg  string // File: the file name; Skip: the reason
	Text string // the block's content, ending in a newline
}

// Where names the block for a message: page:line.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.Page, b.Line) }

// Shell reports whether the block is shell (its commands are checked).
func (b Block) Shell() bool { return b.Lang == "sh" || b.Lang == "bash" || b.Lang == "console" }

// tested are the languages whose blocks need a marker; diagrams and text do not.
var tested = map[string]bool{"sh": true, "bash": true, "console": true, "yaml": true, "yml": true, "json": true}

const markerPrefix, markerSuffix = "<!-- doctest:", "-->"

// Parse returns the marked blocks of page (shell, YAML, JSON), in order. A block of those
// languages without a valid marker, a marker on a block of another language, or a fence that
// is never closed is an error.
func Parse(page string, md []byte) ([]Block, error) { return parse(page, md, true) }

// Blocks returns the shell, YAML and JSON blocks of a page whose blocks carry no markers (Kind
// is empty), to check their commands.
func Blocks(page string, md []byte) ([]Block, error) { return parse(page, md, false) }

func parse(page string, md []byte, strict bool) ([]Block, error) {
	var blocks []Block
	var open *Block
	var body strings.Builder
	prev := ""
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case open != nil && strings.TrimSpace(line) == "```":
			open.Text = body.String()
			if tested[open.Lang] {
				blocks = append(blocks, *open)
			}
			open = nil
		case open != nil:
			body.WriteString(line + "\n")
		case strings.HasPrefix(line, "```"):
			b := Block{Page: page, Line: n}
			if f := strings.Fields(line[3:]); len(f) > 0 {
				b.Lang = f[0]
			}
			hasMarker := strings.HasPrefix(strings.TrimSpace(prev), markerPrefix)
			switch {
			case !strict:
			case tested[b.Lang] && !hasMarker:
				return nil, fmt.Errorf("%s: a %s block needs a %s ... %s marker on the line before it", b.Where(), b.Lang, markerPrefix, markerSuffix)
			case !tested[b.Lang] && hasMarker:
				return nil, fmt.Errorf("%s: a %q block is never tested, so it takes no marker", b.Where(), b.Lang)
			case hasMarker:
				var err error
				if b.Kind, b.Arg, err = parseMarker(prev, b.Shell()); err != nil {
					return nil, fmt.Errorf("%s: %w", b.Where(), err)
				}
			}
			open = &b
			body.Reset()
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if open != nil {
		return nil, fmt.Errorf("%s: the block is never closed", open.Where())
	}
	return blocks, nil
}

// parseMarker reads `<!-- doctest: KIND [ARG] -->`; shell says whether its block is shell.
func parseMarker(line string, shell bool) (kind, arg string, err error) {
	s := strings.TrimSpace(line)
	if !strings.HasSuffix(s, markerSuffix) {
		return "", "", fmt.Errorf("marker %q does not end in %s", s, markerSuffix)
	}
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, markerPrefix), markerSuffix))
	kind, arg, _ = strings.Cut(s, " ")
	arg = strings.TrimSpace(arg)
	switch {
	case kind == Run && (arg != "" || !shell):
		return "", "", fmt.Errorf("%q: run takes no argument and only a shell block", s)
	case (kind == File || kind == Check) && shell:
		return "", "", fmt.Errorf("%q: %s is for a YAML block", s, kind)
	case kind == File && (arg == "" || strings.ContainsAny(arg, "/ ")):
		return "", "", fmt.Errorf("%q: file takes one file name", s)
	case kind == Check && arg != "":
		return "", "", fmt.Errorf("%q: check takes no argument", s)
	case kind == Skip && arg == "":
		return "", "", fmt.Errorf("%q: skip needs a reason", s)
	case kind != Run && kind != File && kind != Check && kind != Skip:
		return "", "", fmt.Errorf("%q: the kind is one of run, file, check, skip", s)
	}
	return kind, arg, nil
}
