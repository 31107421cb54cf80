package doctest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/capwin/capwin/test/framework/docpages"
	"github.com/capwin/capwin/test/integration/doctest"
)

// allPages are every page whose shell blocks are checked: the run pages, every other page of
// docs/ (sub-folders included) and the top-level pages.
func allPages(t *testing.T) []doctest.Block {
	t.Helper()
	var blocks []doctest.Block
	others, err := docpages.Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range runPages {
		blocks = append(blocks, readPage(t, page, true)...)
	}
	for _, page := range others {
		if !slices.Contains(runPages, page) {
			blocks = append(blocks, readPage(t, page, false)...)
		}
	}
	return blocks
}

// commands returns the documented commands of every page, by the base name of their program.
func commands(t *testing.T) map[string][]located {
	t.Helper()
	out := map[string][]located{}
	for _, b := range allPages(t) {
		if !b.Shell() {
			continue
		}
		for _, c := range doctest.Commands(b.Text) {
			name := filepath.Base(c.Words[0])
			out[name] = append(out[name], located{b, c})
		}
	}
	return out
}

type located struct {
	block doctest.Block
	cmd   doctest.Command
}

// where is the page and line of the command.
func (l located) where() string { return fmt.Sprintf("%s:%d", l.block.Page, l.block.Line+l.cmd.Line) }

// TestDocumentedFlagsExist: every flag of a clusterctl, kubectl or render command in the docs is
// one that the command's --help lists (for the subcommand it is given to).
func TestDocumentedFlagsExist(t *testing.T) {
	cmds := commands(t)
	for _, tool := range []string{"clusterctl", "kubectl", "render"} {
		help := helpOf(tool)
		if len(cmds[tool]) == 0 {
			t.Errorf("no %s command found in the docs", tool)
		}
		for _, l := range cmds[tool] {
			unknown, err := doctest.UnknownFlags(l.cmd.Words[1:], help)
			if err != nil {
				t.Errorf("%s: %s: %v", l.where(), tool, err)
			}
			for _, f := range unknown {
				t.Errorf("%s: %s %s: --help does not list this flag", l.where(), tool, f)
			}
		}
	}
}

// helpOf returns a HelpFunc that runs `tool PATH... --help` (once per path).
func helpOf(tool string) doctest.HelpFunc {
	var mu sync.Mutex
	cache := map[string]doctest.Help{}
	return func(path []string) (doctest.Help, error) {
		mu.Lock()
		defer mu.Unlock()
		key := strings.Join(path, " ")
		if h, ok := cache[key]; ok {
			return h, nil
		}
		out, err := exec.Command(filepath.Join(bin, tool), append(slices.Clone(path), "--help")...).CombinedOutput()
		if err != nil && len(out) == 0 {
			return doctest.Help{}, err
		}
		h := doctest.ParseHelp(string(out))
		switch {
		case tool == "kubectl": // kubectl lists its global flags apart
			global, err := exec.Command(filepath.Join(bin, tool), "options").CombinedOutput()
			if err != nil {
				return doctest.Help{}, err
			}
			h.Merge(doctest.ParseHelp(string(global)))
		case tool == "render": // Go's flag package: -h and --help are implicit
			h.Flags["h"], h.Flags["help"] = false, false
			if key != "" {
				break
			}
			for _, s := range []string{"diagnostics", "preflight", "logs", "image-check", "version"} {
				h.Subcommands[s] = strings.Contains(string(out), "render "+s)
			}
		}
		cache[key] = h
		return h, nil
	}
}

var (
	makeTarget   = regexp.MustCompile(`(?m)^([a-zA-Z0-9_.-]+):`)
	makeVariable = regexp.MustCompile(`(?m)^([A-Z_][A-Z0-9_]*)\s*[?:]?=|\$\(([A-Z_][A-Z0-9_]*)\)`)
)

// TestDocumentedMakeCommandsExist: every make target and variable in the docs is the Makefile's.
func TestDocumentedMakeCommandsExist(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets, vars := map[string]bool{}, map[string]bool{}
	for _, m := range makeTarget.FindAllStringSubmatch(string(mk), -1) {
		targets[m[1]] = true
	}
	for _, m := range makeVariable.FindAllStringSubmatch(string(mk), -1) {
		vars[m[1]+m[2]] = true
	}
	for _, l := range commands(t)["make"] {
		for _, w := range l.cmd.Words[1:] {
			name, _, isVar := strings.Cut(w, "=")
			switch {
			case strings.HasPrefix(w, "-"):
			case isVar && !vars[name]:
				t.Errorf("%s: make %s: the Makefile has no variable %s", l.where(), w, name)
			case !isVar && !targets[w]:
				t.Errorf("%s: make %s: the Makefile has no target %s", l.where(), w, w)
			}
		}
	}
}

// TestExportedVariablesAreDocumented: every variable the run pages export is a template variable
// of docs/variables.md or a manager setting of clusterctl init (or KUBECONFIG, CLUSTER_TOPOLOGY,
// PATH).
func TestExportedVariablesAreDocumented(t *testing.T) {
	known := map[string]bool{"KUBECONFIG": true, "CLUSTER_TOPOLOGY": true, "PATH": true}
	addMatches(t, known, "docs/variables.md", `(?m)^\| `+"`"+`([A-Z0-9_]+)`+"`")
	addMatches(t, known, "bootstrap/config/manager/manager.yaml", `\$\{([A-Z0-9_]+):=`)
	addMatches(t, known, "infrastructure/config/manager/manager.yaml", `\$\{([A-Z0-9_]+):=`)
	for _, page := range runPages {
		for _, b := range readPage(t, page, true) {
			if !b.Shell() {
				continue
			}
			for _, c := range doctest.Commands(b.Text) {
				if c.Words[0] != "export" {
					continue
				}
				for _, w := range c.Words[1:] {
					if name, _, _ := strings.Cut(w, "="); !known[name] {
						t.Errorf("%s: export %s: not a variable of docs/variables.md or of the managers", b.Where(), name)
					}
				}
			}
		}
	}
}

func addMatches(t *testing.T, to map[string]bool, file, pattern string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	ms := regexp.MustCompile(pattern).FindAllStringSubmatch(string(b), -1)
	if len(ms) == 0 {
		t.Fatalf("%s: nothing matches %s", file, pattern)
	}
	for _, m := range ms {
		to[m[1]] = true
	}
}
