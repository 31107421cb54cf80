// Package layout holds tests of the repository's structure rules.
package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/envtest"
)

// api/ is imported by users and other providers: it may depend only on the standard library,
// apimachinery and Cluster API's api module (depguard's rule api-leaf in .golangci.yml, held here without golangci-lint).
func TestAPIImportsOnlyApimachineryAndCAPIAPI(t *testing.T) {
	allowed := []string{"k8s.io/apimachinery/", "sigs.k8s.io/cluster-api/api/", "k8s.io/api/"}
	root := filepath.Join(envtest.RepoRoot(), "api")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
				continue // standard library
			}
			ok := false
			for _, a := range allowed {
				ok = ok || strings.HasPrefix(p, a)
			}
			if !ok {
				t.Errorf("%s imports %s; api/ may import only %v", path, p, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go files found under api/")
	}
}
