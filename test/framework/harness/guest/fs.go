package guest

import (
	"slices"
	"strings"
	"sync"
)

// fileSystem is the guest's disk: files only (directories exist implicitly), keyed by a path
// folded as Windows compares paths (case-insensitive, / and \ alike).
type fileSystem struct {
	mu    sync.Mutex
	files map[string][]byte
	// names are the paths as first written, by folded path (Windows keeps a name's case).
	names map[string]string
}

func newFileSystem() *fileSystem {
	return &fileSystem{files: map[string][]byte{}, names: map[string]string{}}
}

func fold(path string) string { return strings.ToLower(strings.ReplaceAll(path, "/", `\`)) }

func (f *fileSystem) write(path string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.name(path)
	f.files[fold(path)] = append([]byte(nil), data...)
}

func (f *fileSystem) appendTo(path string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.name(path)
	f.files[fold(path)] = append(f.files[fold(path)], data...)
}

// name records a path's case when the file is new (f.mu held).
func (f *fileSystem) name(path string) {
	if _, ok := f.names[fold(path)]; !ok {
		f.names[fold(path)] = strings.ReplaceAll(path, "/", `\`)
	}
}

// original is a file's path as it was first written ("" if there is no such file).
func (f *fileSystem) original(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.names[fold(path)]
}

func (f *fileSystem) read(path string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[fold(path)]
	return append([]byte(nil), data...), ok
}

func (f *fileSystem) exists(path string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.files[fold(path)]
	return ok
}

func (f *fileSystem) remove(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.files, fold(path))
	delete(f.names, fold(path))
}

// under returns the files below dir (sub-folders included) by folded path.
func (f *fileSystem) under(dir string) map[string][]byte {
	out := map[string][]byte{}
	for _, path := range f.walk(dir) {
		if data, ok := f.read(path); ok {
			out[path] = data
		}
	}
	return out
}

// walk returns the paths (folded) of the files below dir, sub-folders included, in the order
// filepath.Walk visits them: depth first, names in lexical order.
func (f *fileSystem) walk(dir string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	prefix := strings.TrimSuffix(fold(dir), `\`) + `\`
	var out []string
	for path := range f.files {
		if strings.HasPrefix(path, prefix) {
			out = append(out, path)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return slices.Compare(strings.Split(a, `\`), strings.Split(b, `\`))
	})
	return out
}
