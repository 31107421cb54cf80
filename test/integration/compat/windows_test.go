package compat

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/repo"
)

// TestWindowsProgramsTable: the table of the Windows programs the stage runs (test/integration/winebin) names
// exactly the versions scripts/windows-binaries.sh builds.
func TestWindowsProgramsTable(t *testing.T) {
	out, err := exec.Command("bash", filepath.Join(repo.Root(), "scripts", "windows-binaries.sh"), "--versions").Output()
	if err != nil {
		t.Fatalf("scripts/windows-binaries.sh --versions: %v", err)
	}
	built := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		family, version, _ := strings.Cut(line, " ")
		built[family] = append(built[family], version)
	}
	programs := map[string]string{"kubeadm.exe": "kubernetes", "kubelet.exe": "kubernetes", "kube-proxy.exe": "kubernetes",
		"kube-log-runner.exe": "kubernetes", "containerd.exe": "containerd", "flanneld.exe": "flannel",
		"windows_exporter.exe": "windows-exporter"}
	rows := sectionTable(t, "Windows programs under Wine")
	seen := map[string]bool{}
	for _, r := range rows {
		program := strings.Trim(r["Program"], "`")
		family, ok := programs[program]
		if !ok {
			t.Errorf("docs/compatibility.md: the stage runs no %q", r["Program"])
			continue
		}
		seen[program] = true
		var docs []string
		for _, v := range strings.Split(r["Versions"], ",") {
			docs = append(docs, strings.TrimSpace(v))
		}
		want := append([]string(nil), built[family]...)
		sort.Strings(docs)
		sort.Strings(want)
		if strings.Join(docs, ",") != strings.Join(want, ",") {
			t.Errorf("docs/compatibility.md: %s %v, scripts/windows-binaries.sh builds %v", program, docs, want)
		}
	}
	for program := range programs {
		if !seen[program] {
			t.Errorf("docs/compatibility.md: the table of ## Windows programs under Wine has no row for %s", program)
		}
	}
}
