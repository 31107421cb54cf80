package guest

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"

	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
)

// TestCollectLikeTheScript: the simulated collector reads what collect.ps1 reads (the document's
// folders and files, never the rest of the disk), keeps each file's end and its name's case,
// halves what it keeps until the zip fits, and records what it did not find.
func TestCollectLikeTheScript(t *testing.T) {
	j := NewJournal()
	g := &Guest{journal: j, fs: j.fs, cfg: Config{Hostname: "win-md-0-abc12"}}
	j.CloudbaseInit(true)
	g.fs.write(`C:\var\log\capwin\bootstrap.log`, []byte(strings.Repeat("x", 100)+"the end"))
	g.fs.write(`C:\ProgramData\capwin\bootstrap.ps1`, []byte("holds the join token"))
	g.fs.write(`C:\ProgramData\capwin\launch.log`, []byte("launched"))
	script, err := guestmeta.NewCollect("r1").Script()
	if err != nil {
		t.Fatal(err)
	}
	files := unzip(t, g, script)
	if got := files["files/C/var/log/capwin/bootstrap.log"]; !strings.HasSuffix(got, "the end") {
		t.Errorf("bootstrap.log = %q", got)
	}
	if got := files["files/C/Program Files/Cloudbase Solutions/Cloudbase-Init/log/cloudbase-init.log"]; !strings.Contains(got, "Executing user data failed") {
		t.Errorf("cloudbase-init.log = %q (files %v)", got, keys(files))
	}
	if !strings.Contains(files["events/Application.json"], "Executing user data failed") || !strings.Contains(files["events/System.json"], "6005") {
		t.Errorf("events: %v", files)
	}
	if files["files/C/ProgramData/capwin/launch.log"] != "launched" {
		t.Errorf("launch.log missing: %v", keys(files))
	}
	for name := range files {
		if strings.Contains(name, "bootstrap.ps1") {
			t.Errorf("the collector read %s", name)
		}
	}
	if !strings.Contains(files["collect.log"], `no file C:\var\lib\capwin\steps.done`) || !strings.Contains(files["state/hnsdiag.txt"], "nat") {
		t.Errorf("collect.log %q, hnsdiag %q", files["collect.log"], files["state/hnsdiag.txt"])
	}

	// Too big: each file keeps less, until the zip fits.
	doc := guestmeta.NewCollect("r2")
	doc.MaxArchiveBytes, doc.MaxFileBytes = 64<<10, 1<<20
	random := make([]byte, 512<<10)
	for i := range random {
		random[i] = byte((i*7919 + i/13*31) % 251)
	}
	g.fs.write(`C:\var\log\kubelet\kubelet.log`, random)
	script, _ = doc.Script()
	out, err := g.Collect(script)
	if err != nil || int64(len(out)) > doc.MaxArchiveBytes {
		t.Fatalf("zip of %d bytes (limit %d), %v", len(out), doc.MaxArchiveBytes, err)
	}
}

func unzip(t *testing.T, g *Guest, script []byte) map[string]string {
	t.Helper()
	data, err := g.Collect(script)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		_ = rc.Close()
		out[f.Name] = string(b)
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
