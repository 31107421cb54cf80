// Package secretscan looks for the credentials a run used (vCenter and Hyper-V passwords, guest,
// registry and domain credentials, bootstrap tokens) in everything capwin's managers let out: their
// logs, events, the status, conditions and annotations of Cluster API's and capwin's objects, and
// their metrics. A test collects the credentials while it runs (Collector) and scans at its end; a
// hit names the credential and where it was found, never the value.
package secretscan

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// MinLength is the shortest value searched for: a shorter one would be found by chance.
const MinLength = 8

// Hit is one credential found in one place.
type Hit struct {
	// Secret names the credential ("Secret ns/name key password"), never its value.
	Secret string
	// Where names the place ("log controllers.log line 812", "Event ns/name", "VCenterMachine
	// ns/name status", "metrics").
	Where string
	// Excerpt is the text around the hit with every credential replaced by <redacted>.
	Excerpt string
}

func (h Hit) String() string { return fmt.Sprintf("%s in %s: %s", h.Secret, h.Where, h.Excerpt) }

// Scanner holds the credentials to look for. Its methods may be called concurrently.
type Scanner struct {
	mu      sync.RWMutex
	needles map[string]string // form of a value -> name of the credential
}

// New returns a Scanner with no credentials.
func New() *Scanner { return &Scanner{needles: map[string]string{}} }

// Add records a credential: its value as is, JSON-escaped and base64-encoded. Values shorter
// than MinLength are left out.
func (s *Scanner) Add(name, value string) {
	if len(value) < MinLength {
		return
	}
	quoted, _ := json.Marshal(value)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, form := range []string{value, string(quoted[1 : len(quoted)-1]), base64.StdEncoding.EncodeToString([]byte(value))} {
		if _, ok := s.needles[form]; !ok {
			s.needles[form] = name
		}
	}
}

// Names lists the credentials held, sorted.
func (s *Scanner) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, n := range s.needles {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Text scans one piece of text.
func (s *Scanner) Text(where, text string) []Hit {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var hits []Hit
	for form, name := range s.needles {
		if i := strings.Index(text, form); i >= 0 {
			hits = append(hits, Hit{Secret: name, Where: where, Excerpt: s.excerpt(text, i, len(form))})
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].Secret < hits[j].Secret })
	return hits
}

// excerpt is up to 80 bytes either side of text[i:i+n], every credential redacted (s.mu held).
func (s *Scanner) excerpt(text string, i, n int) string {
	from, to := max(0, i-80), min(len(text), i+n+80)
	out := text[from:to]
	forms := make([]string, 0, len(s.needles))
	for form := range s.needles {
		forms = append(forms, form)
	}
	sort.Slice(forms, func(a, b int) bool { return len(forms[a]) > len(forms[b]) })
	for _, form := range forms {
		out = strings.ReplaceAll(out, form, "<redacted>")
	}
	return strings.ToValidUTF8(out, "?")
}

// Reader scans a stream line by line; Where gets the line number.
func (s *Scanner) Reader(where string, r io.Reader) ([]Hit, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var hits []Hit
	for n := 1; sc.Scan(); n++ {
		hits = append(hits, s.Text(fmt.Sprintf("%s line %d", where, n), sc.Text())...)
	}
	return hits, sc.Err()
}

// Files scans every regular file under the given files and directories and returns the hits and
// the number of files read.
func (s *Scanner) Files(paths ...string) ([]Hit, int, error) {
	var hits []Hit
	files := 0
	scan := func(where string, open func() (fs.File, error)) error {
		f, err := open()
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		files++
		h, err := s.Reader("file "+where, f)
		hits = append(hits, h...)
		return err
	}
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return hits, files, err
		}
		if !info.IsDir() {
			//nolint:gosec // G304: a file the test names
			if err := scan(path, func() (fs.File, error) { return os.Open(path) }); err != nil {
				return hits, files, err
			}
			continue
		}
		root, err := os.OpenRoot(path)
		if err != nil {
			return hits, files, err
		}
		err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			return scan(filepath.Join(path, name), func() (fs.File, error) { return root.Open(name) })
		})
		_ = root.Close()
		if err != nil {
			return hits, files, err
		}
	}
	return hits, files, nil
}

// CheckCollected says whether the scanner holds a bootstrap token: every run that creates a
// machine uses one, so a scan without it would prove little.
func (s *Scanner) CheckCollected() error {
	names := s.Names()
	if !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "bootstrap token") }) {
		return fmt.Errorf("secret scan: no bootstrap token was seen among %d credentials", len(names))
	}
	return nil
}

// Verdict is nil without hits, else an error naming them (the first 20).
func Verdict(hits []Hit) error {
	if len(hits) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d credentials found where they must not be:", len(hits))
	for i, hit := range hits {
		if i == 20 {
			msg += fmt.Sprintf("\n  ... and %d more", len(hits)-i)
			break
		}
		msg += "\n  " + hit.String()
	}
	return errors.New(msg)
}
