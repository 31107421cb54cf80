package nodelogs

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzAddGuestZip: the zip comes from a guest the tenant controls. Whatever it holds, unpacking
// it never panics, never names a file outside the machine's guest/ folder, and keeps each file to
// its bound.
func FuzzAddGuestZip(f *testing.F) {
	for _, names := range [][]string{{"files/C/var/log/kubelet/kubelet.log"}, {"../../etc/passwd", "/abs", `..\..\x`, "a/../../b"}, {"dir/", "state/x.txt"}} {
		var buf bytes.Buffer
		z := zip.NewWriter(&buf)
		for _, n := range names {
			w, _ := z.Create(n)
			_, _ = w.Write([]byte(strings.Repeat("x", 100)))
		}
		_ = z.Close()
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		a := newArchive(&out, time.Unix(0, 0))
		_ = addGuestZip(a, "m/guest/", data, 64)
		if err := a.close(); err != nil {
			t.Fatal(err)
		}
		files, err := ReadArchive(&out)
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			if !strings.HasPrefix(name, "m/guest/") || strings.Contains(name, "..") {
				t.Fatalf("file %q outside the machine's guest folder", name)
			}
			if kept := strings.TrimPrefix(content, "[capwin: only the last 64 bytes are kept]\n"); len(kept) > 64 {
				t.Fatalf("%s keeps %d bytes", name, len(kept))
			}
		}
	})
}
