package userdata

import (
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// kubeletPatchFor renders a node of version with the user's kubeletConfiguration and returns the
// kubelet configuration patch the node writes.
func kubeletPatchFor(t *testing.T, version, user string) map[string]any {
	t.Helper()
	in := minimalInput(FormatPowerShell)
	in.KubernetesVersion = version
	in.KubeletConfiguration = []byte(user)
	u, doc := render(t, in)
	var patch map[string]any
	if err := json.Unmarshal([]byte(nodeFiles(t, u, doc)[KubeletPatchPath]), &patch); err != nil {
		t.Fatal(err)
	}
	return patch
}

// TestNodeLogQueryByVersion: the query is on for every kubelet that has it; the feature gate is
// named only where it is off by default (v1.27 to v1.35), never from v1.36 (locked on, removed in
// v1.39: naming it then stops the kubelet), and not at all for a version capwin cannot read.
func TestNodeLogQueryByVersion(t *testing.T) {
	for _, c := range []struct {
		version     string
		query, gate bool
	}{
		{"v1.26.9", false, false},
		{"v1.27.0", true, true},
		{"v1.31.4", true, true},
		{"v1.35.4", true, true},
		{"v1.36.0", true, false},
		{"v1.37.2", true, false},
		{"v1.39.0", true, false},
		{"latest", false, false}, // not a version capwin can read
	} {
		g := NewWithT(t)
		patch := kubeletPatchFor(t, c.version, "")
		if c.query {
			g.Expect(patch).To(HaveKeyWithValue("enableSystemLogQuery", true), c.version)
		} else {
			g.Expect(patch).NotTo(HaveKey("enableSystemLogQuery"), c.version)
		}
		if c.gate {
			g.Expect(patch).To(HaveKeyWithValue("featureGates", map[string]any{"NodeLogQuery": true}), c.version)
		} else {
			g.Expect(patch).NotTo(HaveKey("featureGates"), c.version)
		}
	}
}

// TestNodeLogQueryGivesWayToTheUser: the user's own settings win, the user's other feature gates
// are kept beside NodeLogQuery, and a log handler turned off does not get the query turned on
// (the kubelet refuses the query without the handler).
func TestNodeLogQueryGivesWayToTheUser(t *testing.T) {
	g := NewWithT(t)
	patch := kubeletPatchFor(t, "v1.33.1", `{"featureGates": {"GracefulNodeShutdown": false}}`)
	g.Expect(patch).To(HaveKeyWithValue("featureGates", map[string]any{"GracefulNodeShutdown": false, "NodeLogQuery": true}))
	g.Expect(patch).To(HaveKeyWithValue("enableSystemLogQuery", true))

	patch = kubeletPatchFor(t, "v1.33.1", `{"featureGates": {"NodeLogQuery": false}, "enableSystemLogQuery": false}`)
	g.Expect(patch).To(HaveKeyWithValue("featureGates", map[string]any{"NodeLogQuery": false}))
	g.Expect(patch).To(HaveKeyWithValue("enableSystemLogQuery", false))

	patch = kubeletPatchFor(t, "v1.36.3", `{"enableSystemLogHandler": false}`)
	g.Expect(patch).To(HaveKeyWithValue("enableSystemLogHandler", false))
	g.Expect(patch).NotTo(HaveKey("enableSystemLogQuery"))

	in := minimalInput(FormatPowerShell)
	in.KubernetesVersion = "v1.33.1"
	in.KubeletConfiguration = []byte(`{"featureGates": ["NodeLogQuery"]}`)
	_, err := Render(in)
	g.Expect(err).To(MatchError(ContainSubstring("featureGates is not a JSON object")))
}

// TestKubeletRunsUnderKubeLogRunner: the document names kube-log-runner in the binaries folder
// with capwin's log file, and its rotation flags only for a version whose kube-log-runner has them
// (v1.34 and later: an older one exits on them, and the kubelet would never start).
func TestKubeletRunsUnderKubeLogRunner(t *testing.T) {
	for _, c := range []struct {
		version string
		args    []string
	}{
		{"v1.33.7", []string{`--log-file=C:\var\log\kubelet\kubelet.log`}},
		{"v1.34.0", []string{`--log-file=C:\var\log\kubelet\kubelet.log`, "--log-file-size=100Mi", "--log-file-age=168h"}},
		{"v1.36.3", []string{`--log-file=C:\var\log\kubelet\kubelet.log`, "--log-file-size=100Mi", "--log-file-age=168h"}},
	} {
		g := NewWithT(t)
		in := minimalInput(FormatPowerShell)
		in.KubernetesVersion = c.version
		_, doc := render(t, in)
		g.Expect(doc.Kubelet.LogRunner).To(Equal(DocLogRunner{Binary: in.Binaries.Directory + `\kube-log-runner.exe`,
			Args: c.args, LogFile: KubeletLogFile}), c.version)
		g.Expect(doc.Paths.Directories).To(ContainElements(`C:\var\log\kubelet`, `C:\var\log\containerd`))
		g.Expect(doc.Containerd.LogFile).To(Equal(ContainerdLogFile))
	}
}

// TestKubeLogRunnerDownload: a kube-log-runner download lands in the binaries folder, with the
// kubelet service stopped first (the service runs that program).
func TestKubeLogRunnerDownload(t *testing.T) {
	g := NewWithT(t)
	in := minimalInput(FormatPowerShell)
	sha := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	in.Binaries.KubeLogRunner = &Download{URL: "https://dl.example.com/kube-log-runner.exe", SHA256: sha}
	_, doc := render(t, in)
	g.Expect(doc.Downloads).To(ContainElement(DocDownload{URL: "https://dl.example.com/kube-log-runner.exe", SHA256: sha,
		Path: in.Binaries.Directory + `\kube-log-runner.exe`, Service: "kubelet"}))
}

// TestContainerdLogRotation: containerd's log file is rotated by capwin's scheduled task (it never
// rotates its --log-file), and the kubelet's where kube-log-runner cannot: the document carries the static rotate-logs.ps1 unchanged and what it
// rotates, and the containerd step registers the task after the service is configured.
func TestContainerdLogRotation(t *testing.T) {
	g := NewWithT(t)
	input := minimalInput(FormatPowerShell)
	input.KubernetesVersion = "v1.34.0"
	_, doc := render(t, input)
	r := doc.Containerd.LogRotation
	g.Expect(r.Files).To(Equal([]string{doc.Containerd.LogFile}), "kube-log-runner rotates the kubelet's log from v1.34")
	input.KubernetesVersion = "v1.33.5"
	_, old := render(t, input)
	g.Expect(old.Containerd.LogRotation.Files).To(Equal([]string{doc.Containerd.LogFile, KubeletLogFile}), "before v1.34 the task rotates the kubelet's log too")
	g.Expect(r.MaxBytes).To(BeEquivalentTo(100 << 20))
	g.Expect(r.MaxAgeHours).To(Equal(168))
	g.Expect(r.IntervalMinutes).To(BeNumerically(">", 0))
	g.Expect(r.Task).To(Equal(LogRotationTask))
	script, err := base64.StdEncoding.DecodeString(r.Script)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(script).To(Equal(RotateLogsScript()))
	g.Expect(r.ScriptPath).To(HavePrefix(StateDir + `\`))
	g.Expect(r.ConfigPath).To(Equal(StateDir+`\rotate-logs.json`), "rotate-logs.ps1 reads the file next to it")

	calls, err := pscheck.Calls(filepath.Join("ps", "bootstrap.ps1"))
	g.Expect(err).NotTo(HaveOccurred())
	register, at := pscheck.Find(calls, in("Step-Containerd", "Register-LogRotation"))
	_, restart := pscheck.Find(calls, in("Step-Containerd", "Restart-Service"))
	g.Expect(register.Args).To(Equal([]string{"$config.logRotation"}))
	g.Expect(at).To(BeNumerically(">", restart), "the task is registered once containerd runs with its log file")
	task, _ := pscheck.Find(calls, in("Register-LogRotation", "Register-ScheduledTask"))
	g.Expect(task.Args).To(ContainElements("$Rotation.task", "'SYSTEM'"))
	own, err := pscheck.Calls(filepath.Join("ps", "rotate-logs.ps1"))
	g.Expect(err).NotTo(HaveOccurred())
	_, found := pscheck.Find(own, func(c pscheck.Call) bool {
		return c.Name == "Join-Path" && slices.Contains(c.Args, "'rotate-logs.json'")
	})
	g.Expect(found).To(BeNumerically(">=", 0), "rotate-logs.ps1 reads rotate-logs.json next to it")
}
