package wire

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var driveFiles = map[string][]byte{
	"meta-data":      []byte("instance-id: 6f1c\nlocal-hostname: win-1\n"),
	"user-data":      bytes.Repeat([]byte("#ps1_sysnative\r\n"), 500),
	"network-config": []byte("version: 2\nethernets: {}\n"),
	// capwin's network document for the bootstrap's network step (guestos.NetworkFile).
	"capwin-network.json": []byte(`{"version":1,"network":[],"searchDomains":["example.com"]}`),
}

// TestConfigDriveReadsBack: the image is labelled cidata and its files read back unchanged.
func TestConfigDriveReadsBack(t *testing.T) {
	iso, err := ConfigDrive(driveFiles)
	if err != nil {
		t.Fatal(err)
	}
	got := readISO(t, iso)
	for name, want := range driveFiles {
		if !bytes.Equal(got[name], want) {
			t.Errorf("%s: read back %d bytes, want %d", name, len(got[name]), len(want))
		}
	}
	if !bytes.Contains(iso[32768:34816], []byte("CIDATA")) && !bytes.Contains(iso[32768:34816], []byte("cidata")) {
		t.Error("primary volume descriptor has no cidata label")
	}
}

// TestConfigDriveJolietNames checks with Debian's isoinfo (when installed) that Windows, which reads
// Joliet names, sees meta-data and not an 8.3 name.
func TestConfigDriveJolietNames(t *testing.T) {
	isoinfo, err := exec.LookPath("isoinfo")
	if err != nil {
		t.Skip("isoinfo not installed (genisoimage)")
	}
	iso, err := ConfigDrive(driveFiles)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cidata.iso")
	if err := os.WriteFile(p, iso, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(isoinfo, "-J", "-l", "-i", p).CombinedOutput()
	if err != nil {
		t.Fatalf("isoinfo: %v: %s", err, out)
	}
	for name := range driveFiles {
		if !strings.Contains(string(out), " "+name) {
			t.Errorf("Joliet listing lacks %s:\n%s", name, out)
		}
	}
	label, _ := exec.Command(isoinfo, "-d", "-i", p).CombinedOutput()
	if !strings.Contains(string(label), "Volume id: cidata") && !strings.Contains(string(label), "Volume id: CIDATA") {
		t.Errorf("volume id:\n%s", label)
	}
}

func TestConfigDriveRefusesPaths(t *testing.T) {
	if _, err := ConfigDrive(map[string][]byte{"../x": nil}); err == nil {
		t.Fatal("no error for a path")
	}
}

// readISO returns the root files of an image.
func readISO(t *testing.T, iso []byte) map[string][]byte {
	t.Helper()
	files, err := ReadConfigDrive(iso)
	if err != nil {
		t.Fatal(err)
	}
	return files
}
