package guest

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// unsafeServiceName finds what the kubelet refuses in a service name of a query.
var unsafeServiceName = regexp.MustCompile(`[^a-zA-Z\-_.:0-9@]+`)

// nodeLogDir is the kubelet's node log directory on Windows ("/var/log/" on the system drive).
const nodeLogDir = `C:\var\log`

// logHandler is the kubelet's /logs/ endpoint, a file server over the log directory; with Node
// Log Query on (logQuery), a query for services reads
// each one's file the way the kubelet does when no event log source has the service's name
// (<dir>\<s>, <dir>\<s>.log, <dir>\<s>\<s>.log); a query for one file, or a path, is served by
// a file server over the log directory (listings for folders).
func (g *Guest) logHandler(logQuery bool) http.Handler {
	files := http.FileServer(http.FS(logFS{g.fs}))
	return http.StripPrefix("/logs/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query, asked := r.URL.Query()["query"]
		if !asked || !logQuery {
			files.ServeHTTP(w, r)
			return
		}
		var services, paths []string
		for _, q := range query {
			switch {
			case strings.ContainsAny(q, `/\`):
				paths = append(paths, q)
			case strings.TrimSpace(q) != "":
				services = append(services, q)
			}
		}
		options := len(r.URL.Query()) > 1
		switch {
		case slices.ContainsFunc(services, unsafeServiceName.MatchString):
			http.Error(w, "query: Invalid value: input contains unsupported characters", http.StatusNotAcceptable)
		case len(services) == 0 && len(paths) == 0:
			http.Error(w, "query: Invalid value: may not be empty", http.StatusBadRequest)
		case r.URL.Path != "":
			http.Error(w, "path not allowed in query mode", http.StatusNotAcceptable)
		case len(services) > 0 && len(paths) > 0:
			http.Error(w, "query: Invalid value: cannot specify a file and service", http.StatusNotAcceptable)
		case len(paths) > 1:
			http.Error(w, "query: Invalid value: cannot specify more than one file", http.StatusNotAcceptable)
		case len(paths) == 1:
			r.URL.Path = strings.ReplaceAll(paths[0], `\`, "/")
			files.ServeHTTP(w, r)
		case options:
			// Every service logs to a file here; the kubelet applies options to event logs only.
			w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
			//nolint:gosec // G705: text/plain, and the names passed the kubelet's own character check above
			_, _ = io.WriteString(w, "\noptions present and query resolved to log files for ["+strings.Join(services, " ")+"]\ntry without specifying options\n")
		default:
			w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
			for _, s := range services {
				g.copyServiceLog(w, s)
			}
		}
	}))
}

func (g *Guest) copyServiceLog(w io.Writer, service string) {
	for _, name := range []string{service, service + ".log", service + `\` + service + ".log"} {
		if data, ok := g.fs.read(nodeLogDir + `\` + name); ok {
			_, _ = w.Write(data)
			return
		}
	}
	_, _ = fmt.Fprintf(w, "\nlog not found for %s\n", service)
}

// logFS is the guest's log directory as an fs.FS (slash-separated names below C:\var\log).
type logFS struct{ fs *fileSystem }

func (l logFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	full := nodeLogDir
	if name != "." {
		full += `\` + strings.ReplaceAll(name, "/", `\`)
	}
	if data, ok := l.fs.read(full); ok {
		return &logFile{info: fileInfo{name: path.Base(name), size: int64(len(data))}, Reader: bytes.NewReader(data)}, nil
	}
	children := map[string]fileInfo{}
	prefix := fold(full) + `\`
	for _, p := range l.fs.walk(full) {
		rest := strings.TrimPrefix(p, prefix)
		first, _, isDir := strings.Cut(rest, `\`)
		if isDir {
			children[first] = fileInfo{name: first, dir: true}
		} else if data, ok := l.fs.read(p); ok {
			children[first] = fileInfo{name: first, size: int64(len(data))}
		}
	}
	if len(children) == 0 && name != "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	d := &logFile{info: fileInfo{name: path.Base(name), dir: true}, Reader: bytes.NewReader(nil)}
	for _, c := range children {
		d.entries = append(d.entries, c)
	}
	sort.Slice(d.entries, func(i, j int) bool { return d.entries[i].Name() < d.entries[j].Name() })
	return d, nil
}

// logFile is an open file or folder of logFS.
type logFile struct {
	*bytes.Reader
	info    fileInfo
	entries []fs.DirEntry
}

func (f *logFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *logFile) Close() error               { return nil }

// ReadDir lists a folder (http.FileServer's listing).
func (f *logFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 || n >= len(f.entries) {
		out := f.entries
		f.entries = nil
		return out, nil
	}
	out := f.entries[:n]
	f.entries = f.entries[n:]
	return out, nil
}

type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i fileInfo) ModTime() time.Time         { return time.Time{} }
func (i fileInfo) IsDir() bool                { return i.dir }
func (i fileInfo) Sys() any                   { return nil }
func (i fileInfo) Type() fs.FileMode          { return i.Mode().Type() }
func (i fileInfo) Info() (fs.FileInfo, error) { return i, nil }
