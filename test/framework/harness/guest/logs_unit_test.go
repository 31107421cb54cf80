package guest

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// TestRunnerLogReadsTheWrapperAsKubeLogRunner: the log file and its rotation come from the
// wrapper's flags in each form Go's flag package accepts; a bad value fails as kube-log-runner does.
func TestRunnerLogReadsTheWrapperAsKubeLogRunner(t *testing.T) {
	g := &Guest{fs: newFileSystem()}
	type want struct {
		path    string
		maxSize int64
		maxAge  time.Duration
	}
	for wrapper, want := range map[string]want{
		`C:\k\kube-log-runner.exe --log-file=C:\var\log\kubelet\kubelet.log --log-file-size=100Mi --log-file-age=168h`: {
			path: `C:\var\log\kubelet\kubelet.log`, maxSize: 100 << 20, maxAge: 168 * time.Hour},
		`"C:\Program Files\k\kube-log-runner.exe" -log-file "C:/var/log/kubelet/kubelet.log"`: {path: "C:/var/log/kubelet/kubelet.log"},
		`C:\k\kube-log-runner.exe -log-file=C:/l.log -log-file-size 1Ki`:                      {path: "C:/l.log", maxSize: 1024},
	} {
		l, err := g.runnerLog(wrapper)
		if err != nil || l == nil || l.path != want.path || l.maxSize != want.maxSize || l.maxAge != want.maxAge {
			t.Errorf("%s: %v, %v; want %+v", wrapper, l != nil, err, want)
		}
	}
	for _, none := range []string{"", `C:\k\kube-log-runner.exe`, `C:\k\kube-log-runner.exe --also-stdout`} {
		if l, err := g.runnerLog(none); l != nil || err != nil {
			t.Errorf("%q: log %s, %v; want no log", none, l.path, err)
		}
	}
	if _, err := g.runnerLog(`C:\k\kube-log-runner.exe --log-file=C:\l.log --log-file-size=big`); err == nil ||
		!strings.Contains(err.Error(), "-log-file-size") {
		t.Errorf("a bad size: %v", err)
	}
}

// TestImageWrapperIsKept: Get-KubeletWrapper's pattern keeps what stands before the kubelet's
// program, quoted or not, and finds nothing in a command line without kube-log-runner.
func TestImageWrapperIsKept(t *testing.T) {
	for line, want := range map[string]string{
		`C:\k\kube-log-runner.exe --log-file=C:/var/log/kubelet/kubelet.log C:\k\kubelet.exe --windows-service`: `C:\k\kube-log-runner.exe --log-file=C:/var/log/kubelet/kubelet.log`,
		`"C:\Program Files\K\KUBE-LOG-RUNNER.EXE" -log-file "C:\logs\k.log" "C:\Program Files\K\kubelet.exe"`:   `"C:\Program Files\K\KUBE-LOG-RUNNER.EXE" -log-file "C:\logs\k.log"`,
		`C:\k\kubelet.exe --windows-service --config=C:\var\lib\kubelet\config.yaml`:                            "",
		`C:\k\kube-log-runner.exe`: "",
	} {
		got := ""
		if m := imageWrapper.FindStringSubmatch(line); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%s: wrapper %q, want %q", line, got, want)
		}
	}
}

// TestNodeLogRotates: past its size the file is renamed <base>-<time><ext> and begins again;
// rotated files older than the age are removed, newer ones kept.
func TestNodeLogRotates(t *testing.T) {
	fs := newFileSystem()
	l := &nodeLog{fs: fs, path: `C:\var\log\kubelet\kubelet.log`, maxSize: 100, maxAge: time.Hour}
	for range 5 {
		l.write(strings.Repeat("x", 30)) // 31 bytes: the fourth line rotates
	}
	current, _ := fs.read(l.path)
	rotated := fs.walk(`C:\var\log\kubelet`)
	if len(current) != 31 || len(rotated) != 2 || !strings.HasPrefix(rotated[0], `c:\var\log\kubelet\kubelet-`) ||
		!strings.HasSuffix(rotated[0], ".log") {
		t.Fatalf("current %d bytes, files %v", len(current), rotated)
	}
	old := `C:\var\log\kubelet\kubelet-20200101-000000.log`
	fs.write(old, []byte("old\n"))
	l.rotated[old] = time.Now().Add(-2 * time.Hour)
	l.rotate(time.Now())
	if fs.exists(old) || len(fs.walk(`C:\var\log\kubelet`)) != 2 {
		t.Errorf("after a rotation: %v (the file older than an hour should be gone)", fs.walk(`C:\var\log\kubelet`))
	}
	var none *nodeLog
	none.write("kept nowhere") // a kubelet without a wrapper
}

// TestContainerdLogRotation: Register-LogRotation leaves the static script and its configuration
// on the disk and the task registered once; containerd's log then rotates at the document's size.
func TestContainerdLogRotation(t *testing.T) {
	g := &Guest{fs: newFileSystem()}
	s := &script{g: g}
	c := userdata.DocContainerd{LogFile: userdata.ContainerdLogFile, LogRotation: userdata.DocLogRotation{
		Task: userdata.LogRotationTask, ScriptPath: `C:\var\lib\capwin\rotate-logs.ps1`, ConfigPath: `C:\var\lib\capwin\rotate-logs.json`,
		Script: base64.StdEncoding.EncodeToString(userdata.RotateLogsScript()), Files: []string{userdata.ContainerdLogFile},
		MaxBytes: 200, MaxAgeHours: 168, IntervalMinutes: 15,
	}}
	for range 2 { // the step runs again after a reboot
		if err := s.registerLogRotation(c); err != nil {
			t.Fatal(err)
		}
	}
	if got := g.Tasks(); len(got) != 1 || got[0] != userdata.LogRotationTask {
		t.Errorf("tasks %v", got)
	}
	if config, _ := g.fs.read(c.LogRotation.ConfigPath); !strings.Contains(string(config), `"maxBytes":200`) {
		t.Errorf("rotate-logs.json: %s", config)
	}
	for range 3 {
		g.containerdLine(strings.Repeat("x", 60)) // ~120 bytes a line: the second rotates
	}
	if files := g.fs.walk(`C:\var\log\containerd`); len(files) != 2 {
		t.Errorf("containerd's log folder: %v, want the log and one rotated copy", files)
	}
	// kube-log-runner before v1.34 cannot rotate: the task rotates the kubelet's file when it names it.
	kubelet := &nodeLog{fs: g.fs, path: "C:/var/log/kubelet/kubelet.log"}
	rotatedByTask(kubelet, c.LogRotation)
	if kubelet.maxSize != 0 {
		t.Errorf("a file the task does not name got its rotation")
	}
	c.LogRotation.Files = append(c.LogRotation.Files, userdata.KubeletLogFile)
	rotatedByTask(kubelet, c.LogRotation)
	if kubelet.maxSize != 200 || kubelet.maxAge != 168*time.Hour {
		t.Errorf("the kubelet's log: size %d, age %s", kubelet.maxSize, kubelet.maxAge)
	}
}
