// Package docpages reads the repository's Markdown pages for the tests that keep them usable:
// every relative link reaches a file and a heading that exist, and no user page grows past
// what a reader can take in.
package docpages

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Pages lists the Markdown pages under root, as slash paths relative to root: README.md, the
// other top-level pages and everything under docs/.
func Pages(root string) ([]string, error) {
	var out []string
	top, err := filepath.Glob(filepath.Join(root, "*.md"))
	if err != nil {
		return nil, err
	}
	for _, p := range top {
		out = append(out, filepath.Base(p))
	}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	sort.Strings(out)
	return out, err
}

// Link is a relative link of a page: its target file (slash path relative to the repository
// root, the page itself for "#anchor") and its anchor.
type Link struct {
	Line           int
	Target, Anchor string
}

var (
	linkRE  = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	fenceRE = regexp.MustCompile("^\\s*(```|~~~)")
	codeRE  = regexp.MustCompile("`[^`]*`")
)

// Links are the relative links of a page's text (outside code blocks and code spans).
func Links(page string, text []byte) []Link {
	var out []Link
	inCode := false
	for i, line := range strings.Split(string(text), "\n") {
		if fenceRE.MatchString(line) {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
			u := m[1]
			if strings.Contains(u, "://") || strings.HasPrefix(u, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(u, "#")
			target := page
			if file != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
			}
			out = append(out, Link{Line: i + 1, Target: target, Anchor: anchor})
		}
	}
	return out
}

var (
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	anchorRE  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	dropRE    = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// Anchors are the anchors of a page's headings, as GitHub makes them (lowercase, punctuation
// other than '-' and '_' dropped, spaces to '-', "-1", "-2" for repeats), and of its
// <a name="..."> tags.
func Anchors(text []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range strings.Split(string(text), "\n") {
		if fenceRE.MatchString(line) {
			inCode = !inCode
			continue
		}
		for _, m := range anchorRE.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if inCode || m == nil {
			continue
		}
		slug := strings.ReplaceAll(dropRE.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			out[slug+"-"+itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
