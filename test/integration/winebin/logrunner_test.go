package winebin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// TestKubeletUnderKubeLogRunner: for each Kubernetes version of the stage, the kube-log-runner of
// that version runs the kubelet with the flags capwin writes on the kubelet service's command
// line (kube-log-runner's, then the kubelet's own), and the kubelet's output lands in capwin's
// log file. An older kube-log-runner would exit on rotation flags it does not have, which is why
// capwin gives them only from v1.34 (TestOldKubeLogRunnerRefusesRotation).
func TestKubeletUnderKubeLogRunner(t *testing.T) {
	c := newCluster(t)
	for _, version := range Versions(t, "kubernetes", "kube-log-runner.exe") {
		t.Run(version, func(t *testing.T) {
			doc := c.render(t, c.spec(t, matrix[0]), version)
			p := NewPrefix(t)
			c.lay(t, p, doc)
			runner := install(t, p, version, doc.Kubelet.LogRunner.Binary)
			kubelet := install(t, p, version, doc.Kubelet.Binary)
			args := append(append(append([]string(nil), doc.Kubelet.LogRunner.Args...), kubelet), consoleArgs(doc)...)
			out := run(t, p, runner, append(args, "--version")...)
			out.mustSucceed(t)
			log, err := os.ReadFile(p.Path(doc.Kubelet.LogRunner.LogFile))
			if err != nil || !strings.Contains(string(log), "Kubernetes "+version) {
				t.Fatalf("%s: %q, %v; want the kubelet's version in it\n%s", doc.Kubelet.LogRunner.LogFile, log, err, out.Output())
			}
			if strings.Contains(out.Output(), "Kubernetes "+version) {
				t.Errorf("the kubelet's output went to the console too:\n%s", out.Output())
			}
		})
	}
}

// TestKubeLogRunnerRotates: with capwin's rotation flags at a small size, the kube-log-runner
// of the newest version renames the full file <base>-<time>.log and starts it again, under Wine's
// Windows file semantics.
func TestKubeLogRunnerRotates(t *testing.T) {
	c := newCluster(t)
	versions := Versions(t, "kubernetes", "kube-log-runner.exe")
	version := versions[len(versions)-1]
	doc := c.render(t, c.spec(t, matrix[0]), version)
	p := NewPrefix(t)
	c.lay(t, p, doc)
	runner := install(t, p, version, doc.Kubelet.LogRunner.Binary)
	kubelet := install(t, p, version, doc.Kubelet.Binary)
	var args []string
	for _, a := range doc.Kubelet.LogRunner.Args {
		if strings.HasPrefix(a, "--log-file-size=") {
			a = "--log-file-size=4Ki" // kubelet --help writes tens of KiB
		}
		args = append(args, a)
	}
	if len(args) == 1 {
		t.Fatalf("capwin gives %s no rotation flags: %v", version, args)
	}
	out := run(t, p, runner, append(args, kubelet, "--help")...)
	out.mustSucceed(t)
	dir := filepath.Dir(p.Path(doc.Kubelet.LogRunner.LogFile))
	rotated, err := filepath.Glob(filepath.Join(dir, "kubelet-*.log"))
	if err != nil || len(rotated) == 0 {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("no rotated kubelet-<time>.log in %s: %v\n%s", dir, entries, out.Output())
	}
}

// TestOldKubeLogRunnerRefusesRotation is the control of the version rule: the oldest
// kube-log-runner of the stage, given the rotation flags of a newer one, exits before it starts
// the kubelet.
func TestOldKubeLogRunnerRefusesRotation(t *testing.T) {
	c := newCluster(t)
	version := Versions(t, "kubernetes", "kube-log-runner.exe")[0]
	if minor := strings.Split(version, ".")[1]; minor >= "34" {
		t.Skipf("the oldest kube-log-runner of the stage (%s) has the rotation flags", version)
	}
	doc := c.render(t, c.spec(t, matrix[0]), version)
	p := NewPrefix(t)
	runner := install(t, p, version, doc.Kubelet.LogRunner.Binary)
	kubelet := install(t, p, version, doc.Kubelet.Binary)
	out := run(t, p, runner, "--log-file="+userdata.KubeletLogFile, "--log-file-size="+userdata.KubeletLogSize, kubelet, "--version")
	wantRefused(t, out, "flag provided but not defined: -log-file-size")
}

// install copies a program of the stage to where the node has it (a path on C:) and returns that path.
func install(t *testing.T, p *Prefix, version, path string) string {
	t.Helper()
	data, err := os.ReadFile(Exe(t, "kubernetes", version, filepath.Base(strings.ReplaceAll(path, `\`, "/"))))
	if err != nil {
		t.Fatal(err)
	}
	host := p.Path(path)
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host, data, 0o644); err != nil { // Wine runs a program without the execute bit
		t.Fatal(err)
	}
	return path
}
