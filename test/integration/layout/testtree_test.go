package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/envtest"
)

// test/ holds three kinds of content, each in its own folder (test/README.md): libraries the
// tests build on (framework), test suites (integration, e2e) and programs (cmd).
var testKinds = []string{"cmd", "e2e", "framework", "integration"}

func TestTestFolderHoldsTheThreeKinds(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(envtest.RepoRoot(), "test"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !slices.Contains(testKinds, e.Name()) {
			t.Errorf("test/%s: test/ holds only %v (and README.md, go.mod, go.sum)", e.Name(), testKinds)
		}
		if !e.IsDir() && !slices.Contains([]string{"README.md", "go.mod", "go.sum"}, e.Name()) {
			t.Errorf("test/%s: test/ holds only %v (and README.md, go.mod, go.sum)", e.Name(), testKinds)
		}
	}
}

// testPackage is one package folder under test/ as the parser sees it.
type testPackage struct {
	dir     string // relative to test/, slash-separated
	name    string // the package name of its non-test files ("" when it has none)
	doc     bool   // a file has a package comment
	imports []string
}

func testPackages(t *testing.T) []testPackage {
	t.Helper()
	root := filepath.Join(envtest.RepoRoot(), "test")
	byDir := map[string]*testPackage{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		p := byDir[rel]
		if p == nil {
			p = &testPackage{dir: filepath.ToSlash(rel)}
			byDir[rel] = p
		}
		if !strings.HasSuffix(path, "_test.go") {
			p.name = f.Name.Name
		}
		p.doc = p.doc || f.Doc != nil
		for _, imp := range f.Imports {
			s, _ := strconv.Unquote(imp.Path.Value)
			p.imports = append(p.imports, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []testPackage
	for _, p := range byDir {
		out = append(out, *p)
	}
	if len(out) < 30 {
		t.Fatalf("found %d packages under test/, want the whole tree", len(out))
	}
	return out
}

// Each package says what it is for; programs live in cmd (and the e2e's image in e2e); a framework library
// never imports a suite or a program, and a suite never imports a program.
func TestTestPackagesByKind(t *testing.T) {
	const module = "github.com/capwin/capwin/test/"
	for _, p := range testPackages(t) {
		kind := strings.SplitN(p.dir, "/", 2)[0]
		if !p.doc {
			t.Errorf("test/%s has no package comment", p.dir)
		}
		// The kind e2e's guest simulator and vcsim (test/e2e/kind/sim, test/e2e/kind/vcsim) are
		// programs too, but they are images that suite builds and stay with it.
		if (kind == "cmd" && p.name != "main") || (p.name == "main" && kind != "cmd" && kind != "e2e") {
			t.Errorf("test/%s: package %q; programs (package main) live in test/cmd, and only they", p.dir, p.name)
		}
		for _, imp := range p.imports {
			to, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			toKind := strings.SplitN(to, "/", 2)[0]
			if (kind == "framework" && toKind != "framework") || (kind != "cmd" && toKind == "cmd") {
				t.Errorf("test/%s (%s) imports test/%s (%s)", p.dir, kind, to, toKind)
			}
		}
	}
}
