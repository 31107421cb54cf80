package guest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/go-logr/logr/testr"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

var dataDisks = []userdata.Disk{
	{Target: 1, LUN: 0, Label: "containerd", DriveLetter: "E"},
	{Target: 0, LUN: 2, FileSystem: "ReFS", Label: "scratch", MountPath: `C:\scratch`},
}

// TestDataDisks boots both formats with two RAW data disks and containerd's root and state on the
// first: the disks step formats and mounts both, containerd starts from them, and a second boot
// of the same machine (a re-run) leaves the prepared disks as they are.
func TestDataDisks(t *testing.T) {
	for _, format := range []userdata.Format{userdata.FormatCloudConfig, userdata.FormatPowerShell} {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			attached := []guest.Disk{{Target: 1, LUN: 0}, {Target: 0, LUN: 2}}
			g := bootDiskGuest(t, format, attached)
			var stepErr *guest.StepError
			if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != "firewall" {
				t.Fatalf("Err() = %v, want the injected failure at firewall (containerd started from E:)", err)
			}
			want := []guest.Disk{
				{Target: 1, LUN: 0, PartitionStyle: "GPT", FileSystem: "NTFS", Label: "containerd", DriveLetter: "E"},
				{Target: 0, LUN: 2, PartitionStyle: "GPT", FileSystem: "ReFS", Label: "scratch", MountPath: `C:\scratch\`},
			}
			assertDisks(t, g.Disks(), want)
			again := bootDiskGuest(t, format, g.Disks())
			if err := again.Err(); !errors.As(err, &stepErr) || stepErr.Step != "firewall" {
				t.Fatalf("second boot: Err() = %v, want the disks step to accept the prepared disks", err)
			}
			assertDisks(t, again.Disks(), want)
		})
	}
	t.Run("foreign data", func(t *testing.T) {
		t.Parallel()
		foreign := []guest.Disk{{Target: 1, LUN: 0, PartitionStyle: "MBR", FileSystem: "NTFS", Label: "backup"}, {Target: 0, LUN: 2}}
		g := bootDiskGuest(t, userdata.FormatPowerShell, foreign)
		var stepErr *guest.StepError
		if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != "disks" || !strings.Contains(err.Error(), "never erases a disk") {
			t.Fatalf("Err() = %v, want the disks step to refuse the disk with data", err)
		}
		assertDisks(t, g.Disks()[:1], foreign[:1])
	})
	t.Run("disk not attached", func(t *testing.T) {
		t.Parallel()
		g := bootDiskGuest(t, userdata.FormatCloudConfig, []guest.Disk{{Target: 0, LUN: 2}})
		if err := g.Err(); err == nil || !strings.Contains(err.Error(), "SCSI target 1 LUN 0 is not attached") {
			t.Fatalf("Err() = %v, want the missing disk named", err)
		}
	})
}

func assertDisks(t *testing.T, got, want []guest.Disk) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("disks %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("disk %d is %+v, want %+v", i, got[i], want[i])
		}
	}
}

func bootDiskGuest(t *testing.T, format userdata.Format, disks []guest.Disk) *guest.Guest {
	t.Helper()
	data := render(t, node{format: format, name: "win-disk-1", token: "abcdef.0123456789abcdef",
		caHash: "sha256:" + strings.Repeat("0", 64), endpoint: "127.0.0.1:6443", disks: dataDisks,
		containerdRoot: `E:\containerd\root`, containerdSta: `E:\containerd\state`})
	g := guest.Boot(t.Context(), guest.Config{UserData: data, Build: osversion.LTSC2022, Address: "10.9.0.4", Hostname: "win-disk-1",
		Channel: &recorder{}, Disks: disks, Faults: guest.Faults{FailAt: "firewall"}, Log: testr.New(t)})
	t.Cleanup(g.Stop)
	waitDone(t, g, time.Minute)
	return g
}
