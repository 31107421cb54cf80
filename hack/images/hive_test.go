package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestEmptyHive(t *testing.T) {
	h := emptyHive("SYSTEM")
	le := binary.LittleEndian
	if len(h) != 2*hiveBlock || string(h[:4]) != "regf" || string(h[hiveBlock:hiveBlock+4]) != "hbin" {
		t.Fatalf("layout: %q %q, %d bytes", h[:4], h[hiveBlock:hiveBlock+4], len(h))
	}
	var sum uint32
	for i := 0; i < 512; i += 4 {
		sum ^= le.Uint32(h[i:])
	}
	if sum != 0 {
		t.Errorf("base block checksum: XOR of the first 512 bytes is %#x, want 0", sum)
	}
	root := hiveBlock + int(le.Uint32(h[36:]))
	if string(h[root+4:root+6]) != "nk" {
		t.Errorf("root cell is %q, want nk", h[root+4:root+6])
	}
	// The cells fill the bin exactly.
	off := hiveBlock + binHeader
	for off < len(h) {
		size := int32(le.Uint32(h[off:])) //nolint:gosec // G115: the cell size field is a signed 32-bit integer
		if size < 0 {
			size = -size
		}
		if size == 0 || size%8 != 0 {
			t.Fatalf("cell at %#x: size %d", off-hiveBlock, size)
		}
		off += int(size)
	}
	if off != len(h) {
		t.Errorf("cells end at %#x, bin at %#x", off, len(h))
	}
	// hivexml (Debian's libhivex-bin), where installed, reads it as a hive with an empty root key.
	if _, err := exec.LookPath("hivexml"); err != nil {
		t.Log("hivexml not installed: skipping the hivex check")
		return
	}
	f := filepath.Join(t.TempDir(), "SYSTEM")
	if err := os.WriteFile(f, h, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("hivexml", "-k", f).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(`<node name="ROOT"`)) {
		t.Errorf("hivexml: %v\n%s", err, out)
	}
}
