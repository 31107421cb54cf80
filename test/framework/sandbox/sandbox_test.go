package sandbox

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The file make sandbox prints to source gives bash every value as it is, quotes included.
func TestWriteEnvSourcesBack(t *testing.T) {
	s := &Sandbox{Kubeconfig: "/tmp/a b/kubeconfig", VCenter: "127.0.0.1:8989", Thumbprint: "AA:BB",
		Username: "sandbox@vsphere.local", Password: `it's $HOME "x"`}
	path := filepath.Join(t.TempDir(), "env.sh")
	if err := s.WriteEnv(path); err != nil {
		t.Fatal(err)
	}
	for name, want := range s.Env() {
		out, err := exec.Command("bash", "-c", `source "$1" && printf %s "${!2}"`, "bash", path, name).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", name, err, out)
		}
		if string(out) != want {
			t.Errorf("%s = %q after source, want %q", name, out, want)
		}
	}
}
