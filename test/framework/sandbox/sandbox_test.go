package sandbox

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// The file make sandbox prints to source gives bash every value as it is, quotes included.
func TestWriteEnvSourcesBack(t *testing.T) {
	s := &Sandbox{Kubeconfig: "/tmp/a b/kubeconfig", VCenter: "127.0.0.1:8989", Thumbprint: "AA:BB",
		Username: "sandbox@vsphere.local", Password: `it's $HOME "x"`, HyperVUsername: `SANDBOX\capwin`,
		HyperVHosts: "[{name: hv1, address: 127.0.0.1, port: 5986}]"}
	dir := t.TempDir()
	if err := s.WriteEnv(dir); err != nil {
		t.Fatal(err)
	}
	for file, env := range map[string]map[string]string{"env.sh": s.Env(), "env-hyperv.sh": s.HyperVEnv()} {
		for name, want := range env {
			out, err := exec.Command("bash", "-c", `source "$1" && printf %s "${!2}"`, "bash", filepath.Join(dir, file), name).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %s: %v: %s", file, name, err, out)
			}
			if string(out) != want {
				t.Errorf("%s: %s = %q after source, want %q", file, name, out, want)
			}
		}
	}
}
