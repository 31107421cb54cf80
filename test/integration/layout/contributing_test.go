package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/envtest"
)

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	leadDir  = regexp.MustCompile("^- \\*\\*`([^`]+)/`\\*\\*")
)

// CONTRIBUTING.md's Layout section matches the tree: every folder or file path it names in code
// spans exists (a glob matches something), either from the repository's root or from the top folder its bullet is about
// (`- **`bootstrap/`** ... `reconcilers/windowsconfig“).
func TestContributingLayoutNamesFoldersThatExist(t *testing.T) {
	root := envtest.RepoRoot()
	b, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := markdownSection(string(b), "## Layout")
	if !ok {
		t.Fatal("CONTRIBUTING.md has no ## Layout section")
	}
	checked := 0
	lead := ""
	for _, line := range strings.Split(section, "\n") {
		if m := leadDir.FindStringSubmatch(line); m != nil {
			lead = m[1]
		} else if !strings.HasPrefix(line, "  ") {
			lead = ""
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			p := strings.TrimSuffix(m[1], "/")
			if !isRepoPath(m[1]) {
				continue
			}
			checked++
			if !exists(root, p) && (lead == "" || !exists(filepath.Join(root, lead), p)) {
				t.Errorf("CONTRIBUTING.md's Layout names %q, which is neither at the root nor under %q", m[1], lead+"/")
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked %d paths in CONTRIBUTING.md's Layout, want the whole section", checked)
	}
}

// isRepoPath tells a path in the repository from other code spans (module paths, commands,
// globs, Go names).
func isRepoPath(s string) bool {
	if !strings.Contains(s, "/") || strings.ContainsAny(s, " ←$") || strings.Contains(s, ".com/") ||
		strings.Contains(s, ".io/") {
		return false
	}
	return true
}

// exists tells whether path (which may be a glob such as */pkg) names something under dir.
func exists(dir, path string) bool {
	m, err := filepath.Glob(filepath.Join(dir, path))
	return err == nil && len(m) > 0
}

// markdownSection is the text under heading, up to the next heading of the same level.
func markdownSection(doc, heading string) (string, bool) {
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		return "", false
	}
	level := heading[:strings.Index(heading, " ")+1]
	if i := strings.Index(rest, "\n"+level); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}
