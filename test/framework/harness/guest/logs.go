package guest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	clog "github.com/containerd/log"
	"github.com/sirupsen/logrus"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// imageWrapper finds an image's kube-log-runner in front of the kubelet on the service's command
// line, as bootstrap.ps1's Get-KubeletWrapper does (PowerShell's -match ignores case).
var imageWrapper = regexp.MustCompile(`(?i)^(.*?kube-log-runner(\.exe)?"?\s.*?)\s+("[^"]*kubelet\.exe"|[^"\s]*kubelet\.exe)(\s|$)`)

// kubeletWrapper is Get-KubeletWrapper: the image's wrapper kept, else capwin's kube-log-runner
// when the node has the program, else none.
func (s *script) kubeletWrapper() string {
	if m := imageWrapper.FindStringSubmatch(s.g.cfg.KubeletService); m != nil {
		s.log("the kubelet service keeps the image's kube-log-runner")
		return m[1]
	}
	r := s.doc.Kubelet.LogRunner
	if s.g.cfg.NoKubeLogRunner && !s.g.fs.exists(r.Binary) {
		s.log("no " + r.Binary + ": the kubelet keeps no log file (set spec.binaries.kubeLogRunner or use an image that has it)")
		return ""
	}
	parts := []string{serviceArgument(r.Binary)}
	for _, a := range r.Args {
		parts = append(parts, serviceArgument(a))
	}
	return strings.Join(parts, " ")
}

// serviceArgument is Format-ServiceArgument: a value with white space is quoted.
func serviceArgument(v string) string {
	switch {
	case strings.HasSuffix(v, "="):
		return v + `""`
	case !strings.ContainsAny(v, " \t"):
		return v
	}
	return `"` + v + `"`
}

// runnerLog is the log file kube-log-runner writes as the wrapper's flags set it (Go's flag
// package: -name=value, --name=value, -name value); nil without a wrapper or a --log-file.
func (g *Guest) runnerLog(wrapper string) (*nodeLog, error) {
	fields := splitCommandLine(wrapper)
	if len(fields) < 2 {
		return nil, nil
	}
	values := map[string]string{}
	for i := 1; i < len(fields); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(fields[i], "-"), "=")
		if !hasValue && i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "-") {
			value, i = fields[i+1], i+1
		}
		values[name] = value
	}
	if values["log-file"] == "" {
		return nil, nil
	}
	l := &nodeLog{fs: g.fs, path: values["log-file"]}
	if v := values["log-file-size"]; v != "" {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("kube-log-runner: invalid value %q for flag -log-file-size: %w", v, err)
		}
		l.maxSize = q.Value()
	}
	if v := values["log-file-age"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("kube-log-runner: invalid value %q for flag -log-file-age: %w", v, err)
		}
		l.maxAge = d
	}
	return l, nil
}

// splitCommandLine splits a service command line at white space outside double quotes.
func splitCommandLine(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				out = append(out, cur.String())
			}
			cur.Reset()
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// rotatedLayout is kube-log-runner's name of a rotated file: <base>-<time><ext>.
const rotatedLayout = "20060102-150405"

// nodeLog is a log file of a node's service. Lines are appended; past maxSize the file is renamed
// <base>-<time><ext> and a new one started, and rotated files older than maxAge are removed, as
// kube-log-runner does.
type nodeLog struct {
	fs      *fileSystem
	path    string
	maxSize int64
	maxAge  time.Duration

	mu   sync.Mutex
	size int64
	// rotated are the rotated files with the time of their rotation.
	rotated map[string]time.Time
}

// write appends one line; a nil log writes nothing (a kubelet without a wrapper keeps no log).
func (l *nodeLog) write(line string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	data := []byte(line + "\n")
	l.fs.appendTo(l.path, data)
	l.size += int64(len(data))
	if l.maxSize > 0 && l.size >= l.maxSize {
		l.rotate(time.Now())
	}
}

func (l *nodeLog) rotate(now time.Time) {
	ext := ""
	if i := strings.LastIndex(l.path, "."); i > strings.LastIndexAny(l.path, `\/`) {
		ext = l.path[i:]
	}
	to := strings.TrimSuffix(l.path, ext) + "-" + now.Format(rotatedLayout) + ext
	data, _ := l.fs.read(l.path)
	l.fs.write(to, data) // os.Rename replaces a file rotated in the same second
	l.fs.remove(l.path)
	l.fs.write(l.path, nil)
	l.size = 0
	if l.rotated == nil {
		l.rotated = map[string]time.Time{}
	}
	l.rotated[to] = now
	if l.maxAge <= 0 {
		return
	}
	for path, at := range l.rotated {
		if now.Sub(at) > l.maxAge {
			l.fs.remove(path)
			delete(l.rotated, path)
		}
	}
}

// klog is a structured line in klog's header format, as the kubelet writes to its standard
// error: severity, time, thread, file:line, then the message and its key="value" pairs.
func klog(severity byte, file, msg string, kv ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%c%s %7d %s] %q", severity, time.Now().Format("0102 15:04:05.000000"), 4242, file, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %s=%q", kv[i], kv[i+1])
	}
	return b.String()
}

// registerLogRotation is Register-LogRotation: rotate-logs.ps1 and its configuration on the disk,
// and the scheduled task. The task's effect (copy the file aside past its size, empty it, remove
// old copies) is what nodeLog does when containerd writes past the size.
func (s *script) registerLogRotation(c userdata.DocContainerd) error {
	r := c.LogRotation
	script, err := base64.StdEncoding.DecodeString(r.Script)
	if err != nil {
		return fmt.Errorf("rotate-logs.ps1: %w", err)
	}
	settings, err := json.Marshal(map[string]any{"files": r.Files, "maxBytes": r.MaxBytes, "maxAgeHours": r.MaxAgeHours})
	if err != nil {
		return err
	}
	s.g.fs.write(r.ScriptPath, script)
	s.g.fs.write(r.ConfigPath, settings)
	l := &nodeLog{fs: s.g.fs, path: c.LogFile}
	rotatedByTask(l, r)
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	s.g.containerdLog = l
	if !slices.Contains(s.g.tasks, r.Task) {
		s.g.tasks = append(s.g.tasks, r.Task)
	}
	return nil
}

// rotatedByTask gives a log the rotation of capwin's task when the task rotates its file.
func rotatedByTask(l *nodeLog, r userdata.DocLogRotation) {
	if slices.ContainsFunc(r.Files, func(f string) bool { return fold(f) == fold(l.path) }) {
		l.maxSize, l.maxAge = r.MaxBytes, time.Duration(r.MaxAgeHours)*time.Hour
	}
}

// containerdLine is a line containerd logs (logrus' text format).
func (g *Guest) containerdLine(msg string) {
	g.mu.Lock()
	l := g.containerdLog
	g.mu.Unlock()
	l.write(fmt.Sprintf("time=%q level=info msg=%q", time.Now().UTC().Format(time.RFC3339Nano), msg))
}

// containerdLogger is a logger (logrus' text format, as containerd's) that writes to containerd's
// log file on the node.
func (g *Guest) containerdLogger() *clog.Entry {
	l := logrus.New()
	l.SetOutput(containerdLogWriter{g})
	l.SetFormatter(&logrus.TextFormatter{DisableColors: true, FullTimestamp: true, TimestampFormat: time.RFC3339Nano})
	return logrus.NewEntry(l)
}

// containerdLogWriter appends what it is given, line by line, to containerd's log on the node.
type containerdLogWriter struct{ g *Guest }

func (w containerdLogWriter) Write(p []byte) (int, error) {
	w.g.mu.Lock()
	l := w.g.containerdLog
	w.g.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.write(line)
	}
	return len(p), nil
}

// Tasks are the scheduled tasks the bootstrap registered.
func (g *Guest) Tasks() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.tasks...)
}
