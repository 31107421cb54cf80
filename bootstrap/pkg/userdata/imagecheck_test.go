package userdata

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// The image check's script carries its document on the data line, as the bootstrap does, so the
// guest (and the simulated guests) read it with Unpack and ExtractData; a node's bootstrap is no
// image check; the rendered script parses.
func TestImageCheckScript(t *testing.T) {
	for _, vsphere := range []bool{true, false} {
		want := NewImageCheck("v1.36.3", vsphere)
		out, err := ImageCheckScript(want)
		if err != nil {
			t.Fatal(err)
		}
		u, err := Unpack(out)
		if err != nil {
			t.Fatal(err)
		}
		data, err := ExtractData(u.Script)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := DecodeImageCheck(data)
		if !ok || got.KubernetesVersion != "v1.36.3" || got.VMwareTools != vsphere || got.Status.MaxBytes != StatusMaxBytes ||
			got.MinimumBuild != MinimumBuild || got.BinariesDirectory != `C:\k` {
			t.Errorf("vsphere=%v: decoded %+v", vsphere, got)
		}
		if testing.Short() {
			continue
		}
		p := filepath.Join(t.TempDir(), "imagecheck.ps1")
		if err := os.WriteFile(p, u.Script, 0o600); err != nil {
			t.Fatal(err)
		}
		results, err := pscheck.Files(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(results[0].Errors) > 0 {
			t.Errorf("the image check script does not parse:\n%s", results[0])
		}
	}
	bootstrap, err := Render(minimalInput(FormatPowerShell))
	if err != nil {
		t.Fatal(err)
	}
	data, err := ExtractData(bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := DecodeImageCheck(data); ok {
		t.Error("a node's bootstrap decodes as an image check")
	}
}
