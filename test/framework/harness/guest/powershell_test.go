package guest_test

import (
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// testPowerShellReboot: a standalone script on Windows Server 2025 with Hyper-V isolation enables
// the Hyper-V feature, reports Rebooting, runs again after the restart (skipping what is done)
// and joins.
func (f *fixture) testPowerShellReboot(t *testing.T) {
	t.Parallel()
	name := "win-b"
	token := createToken(t, f.cs, 15*time.Minute)
	g, rec := f.boot(t, node{format: userdata.FormatPowerShell, name: name, token: token, hyperV: true},
		osversion.LTSC2025, guest.Faults{}, time.Minute)
	waitDone(t, g, 90*time.Second)
	if err := g.Err(); err != nil {
		t.Fatalf("join: %v", err)
	}
	_, reports, _ := rec.snapshot()
	want := "preflight:Running network:Running proxy:Running time:Running domain:Running domainGroups:Running users:Running features:Running features:Rebooting " +
		"preflight:Running features:Running downloads:Running disks:Running containerd:Running firewall:Running defender:Running prePull:Running " +
		"files:Running preJoin:Running kubelet:Running join:Running postJoin:Running finish:Running finish:Succeeded"
	if got := reportSteps(reports); got != want {
		t.Errorf("reports: %s\nwant:    %s", got, want)
	}
	if _, ok := g.File(`C:\var\lib\capwin\bootstrap.ps1`); ok {
		t.Error("standalone mode's saved copy of the script is still there after finish")
	}
	if data, ok := g.File(`C:\k\hello.txt`); !ok || string(data) != "hello\n" {
		t.Errorf("file written by the script: %q, %v", data, ok)
	}
	n, err := f.cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkNode(t, n, name, "10.0.26100", "Windows Server 2025 Datacenter")
}

// testOldBuild: a Windows Server 2019 image fails the script's preflight and reports why.
func (f *fixture) testOldBuild(t *testing.T) {
	t.Parallel()
	token := createToken(t, f.cs, 15*time.Minute)
	g, rec := f.boot(t, node{format: userdata.FormatPowerShell, name: "win-2019", token: token},
		osversion.LTSC2019, guest.Faults{}, time.Minute)
	waitDone(t, g, time.Minute)
	_, reports, _ := rec.snapshot()
	want := "Windows build 17763 is older than the oldest supported build 20348 (Windows Server 2022)"
	if got := reportSteps(reports); got != "preflight:Running preflight:Failed" || reports[1].Message != want {
		t.Errorf("reports %s, last %+v", got, reports[len(reports)-1])
	}
}
