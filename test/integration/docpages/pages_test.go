// Package docpages_test checks the repository's Markdown pages: links and anchors resolve, the
// paths they name exist, and user pages stay within their length.
package docpages_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/repo"
	"github.com/capwin/capwin/test/framework/docpages"
)

// maxLines is the most a user page may have; docs/reference is generated and exempt, and
// docs/developers holds developer pages.
const maxLines = 500

func TestLinksReachFilesAndHeadings(t *testing.T) {
	root := repo.Root()
	pages, err := docpages.Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(p string) (map[string]bool, bool) {
		if a, ok := anchors[p]; ok {
			return a, a != nil
		}
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			anchors[p] = nil
			return nil, false
		}
		anchors[p] = docpages.Anchors(b)
		return anchors[p], true
	}
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range docpages.Links(page, b) {
			if _, err := os.Stat(filepath.Join(root, l.Target)); err != nil {
				t.Errorf("%s:%d: link to %s: no such file", page, l.Line, l.Target)
				continue
			}
			if l.Anchor == "" || !strings.HasSuffix(l.Target, ".md") {
				continue
			}
			if a, ok := anchorsOf(l.Target); ok && !a[l.Anchor] {
				t.Errorf("%s:%d: link to %s#%s: no such heading", page, l.Line, l.Target, l.Anchor)
			}
		}
	}
}

func TestUserPagesAreShort(t *testing.T) {
	root := repo.Root()
	pages, err := docpages.Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		if strings.HasPrefix(page, "docs/reference/") || strings.HasPrefix(page, "docs/developers/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > maxLines {
			t.Errorf("%s has %d lines: split it by task (at most %d)", page, n, maxLines)
		}
	}
}

// docRef is a doc page named in code, templates or scripts: docs/<path>.md, maybe with #anchor.
var docRef = regexp.MustCompile(`\bdocs/[a-z0-9_/-]+\.md(#[a-z0-9_-]+)?`)

// TestPagesNamedInFilesExist: a message, comment or template that sends the reader to a page
// (docs/vcenter/install.md#vcenter-permissions) names a page and heading that exist.
func TestPagesNamedInFilesExist(t *testing.T) {
	root := repo.Root()
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Skipf("no git checkout: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, ".md") || strings.Contains(f, "node_modules/") || strings.HasPrefix(f, "docs/") || strings.HasPrefix(f, "test/integration/docpages/") || strings.HasPrefix(f, "test/framework/docpages/") {
			continue // pages: TestLinksReachFilesAndHeadings
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // listed but not in the work tree
		}
		for _, m := range docRef.FindAllStringSubmatch(string(b), -1) {
			page, anchor, _ := strings.Cut(m[0], "#")
			text, err := os.ReadFile(filepath.Join(root, page))
			if err != nil {
				t.Errorf("%s names %s: no such page", f, m[0])
			} else if anchor != "" && !docpages.Anchors(text)[anchor] {
				t.Errorf("%s names %s: no such heading", f, m[0])
			}
		}
	}
}
