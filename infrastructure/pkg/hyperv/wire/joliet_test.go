package wire

import (
	"encoding/binary"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
)

// jolietRoot lists the root directory names of an image's Joliet supplementary volume descriptor
// (what Windows reads), parsed by hand so the check needs no tool.
func jolietRoot(t *testing.T, iso []byte) []string {
	t.Helper()
	const sector = 2048
	for s := 16; (s+1)*sector <= len(iso); s++ {
		vd := iso[s*sector : (s+1)*sector]
		if vd[0] == 255 {
			break
		}
		// Type 2 with a UCS-2 escape sequence (%/@, %/C or %/E) is Joliet.
		if vd[0] != 2 || vd[88] != '%' || vd[89] != '/' || !strings.ContainsRune("@CE", rune(vd[90])) {
			continue
		}
		root := vd[156 : 156+34]
		extent, size := binary.LittleEndian.Uint32(root[2:]), binary.LittleEndian.Uint32(root[10:])
		dir := iso[int(extent)*sector : int(extent)*sector+int(size)]
		var names []string
		for off := 0; off < len(dir); {
			n := int(dir[off])
			if n == 0 { // records do not cross sectors: skip to the next one
				off = (off/sector + 1) * sector
				continue
			}
			rec := dir[off : off+n]
			nameLen := int(rec[32])
			raw := rec[33 : 33+nameLen]
			if nameLen > 1 { // 0x00 and 0x01 are . and ..
				u := make([]uint16, nameLen/2)
				for i := range u {
					u[i] = binary.BigEndian.Uint16(raw[2*i:])
				}
				names = append(names, strings.TrimSuffix(string(utf16.Decode(u)), ";1"))
			}
			off += n
		}
		sort.Strings(names)
		return names
	}
	t.Fatal("no Joliet volume descriptor")
	return nil
}

func TestConfigDriveJolietRoot(t *testing.T) {
	iso, err := ConfigDrive(driveFiles)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(jolietRoot(t, iso), ",")
	if got != "capwin-network.json,meta-data,network-config,user-data" {
		t.Fatalf("Joliet root = %s", got)
	}
}
