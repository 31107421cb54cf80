package harness

import (
	"context"
	"testing"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// TestHyperVSourceCopy: a harness host copies an image's golden disk from the share by its
// parentDiskSource; the copy runs the image's Windows build and is not a file a VM left behind.
func TestHyperVSourceCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("PowerShell parser in -short mode")
	}
	hosts, _, err := startHyperV(1, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopHyperV(hosts) })
	srv := hosts[0].Server
	conn, err := hyperv.Dial(hyperv.HostConfig{Name: "hv1", Address: srv.Host, Port: srv.Port, Username: HostUser, Password: HostPassword,
		CABundle: srv.CACertPEM()}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	img := Images["ltsc2025"]
	src := HyperVSource(img.HyperVDisk)
	in := wire.ParentInput{DiskPath: hyperv.DefaultDiskPath, URL: src.URL, SHA256: src.SHA256}
	var st wire.ParentState
	for deadline := time.Now().Add(10 * time.Second); st.State != wire.ParentReady && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := conn.Run(context.Background(), wire.OpParent, in, &st); err != nil {
			t.Fatal(err)
		}
	}
	if st.State != wire.ParentReady || buildOfDisk(st.Path) != img.Build {
		t.Fatalf("copy %+v runs build %d, want ready with build %d", st, buildOfDisk(st.Path), img.Build)
	}
	if vms, files := countHyperV(hosts, nil); vms != 0 || files != 0 {
		t.Fatalf("%d VMs and %d left files counted, want none", vms, files)
	}
	if HyperVSource(`D:\other.vhdx`) != nil {
		t.Fatal("a source for an unknown disk")
	}
}
