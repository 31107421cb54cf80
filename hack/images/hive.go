package main

import (
	"encoding/binary"
	"unicode/utf16"
)

// Windows unpacks the first layer of an image as a base layer, and that step checks that
// Files/Windows/System32/config holds the registry hives DEFAULT, SAM, SECURITY, SOFTWARE and
// SYSTEM; from Windows Server 2025 they must be valid hives, not empty files (Microsoft's
// windows-host-process-containers-base-image ships minimal ones for this reason). emptyHive
// writes such a hive: a root key with no values or subkeys, in the regf format (base block,
// one 4 KiB hive bin with the root key node, its security cell and a free cell).

var hiveNames = []string{"DEFAULT", "SAM", "SECURITY", "SOFTWARE", "SYSTEM"}

const (
	hiveBlock    = 4096
	binHeader    = 32
	noCell       = 0xFFFFFFFF
	keyAllAccess = 0xF003F
)

func emptyHive(fileName string) []byte {
	le := binary.LittleEndian
	bin := make([]byte, hiveBlock)
	copy(bin, "hbin")
	le.PutUint32(bin[8:], hiveBlock)

	// Cells are addressed by their offset from the start of the hive bins; sizes are
	// negative while allocated and multiples of 8.
	rootName := "ROOT"
	root := uint32(binHeader)
	rootSize := align8(4 + 76 + len(rootName))
	sd := securityDescriptor(sidAdministrators, sidSystem, keyAllAccess, sidSystem, sidAdministrators)
	sk := root + u32(rootSize)
	skSize := align8(4 + 20 + len(sd))
	free := sk + u32(skSize)

	nk := bin[root:]
	le.PutUint32(nk, allocatedCell(rootSize))
	nk = nk[4:]
	copy(nk, "nk")
	le.PutUint16(nk[2:], 0x2C)    // KEY_HIVE_ENTRY | KEY_NO_DELETE | KEY_COMP_NAME
	le.PutUint32(nk[16:], noCell) // parent: none
	le.PutUint32(nk[28:], noCell) // subkeys list
	le.PutUint32(nk[32:], noCell) // volatile subkeys list
	le.PutUint32(nk[40:], noCell) // values list
	le.PutUint32(nk[44:], sk)
	le.PutUint32(nk[48:], noCell) // class name
	le.PutUint16(nk[72:], u16(len(rootName)))
	copy(nk[76:], rootName)

	s := bin[sk:]
	le.PutUint32(s, allocatedCell(skSize))
	s = s[4:]
	copy(s, "sk")
	le.PutUint32(s[4:], sk) // the only security cell: its own next and previous
	le.PutUint32(s[8:], sk)
	le.PutUint32(s[12:], 1) // reference count
	le.PutUint32(s[16:], u32(len(sd)))
	copy(s[20:], sd)

	le.PutUint32(bin[free:], hiveBlock-free) // one free cell for the rest of the bin

	base := make([]byte, hiveBlock)
	copy(base, "regf")
	le.PutUint32(base[4:], 1)  // primary sequence number
	le.PutUint32(base[8:], 1)  // secondary sequence number (equal: the hive is consistent)
	le.PutUint32(base[20:], 1) // major version
	le.PutUint32(base[24:], 5) // minor version
	le.PutUint32(base[32:], 1) // file format: direct memory load
	le.PutUint32(base[36:], root)
	le.PutUint32(base[40:], hiveBlock) // hive bins data size
	le.PutUint32(base[44:], 1)         // clustering factor
	for i, c := range utf16.Encode([]rune(fileName)) {
		if i < 32 {
			le.PutUint16(base[48+2*i:], c)
		}
	}
	var sum uint32
	for i := 0; i < 508; i += 4 {
		sum ^= le.Uint32(base[i:])
	}
	switch sum {
	case 0:
		sum = 1
	case 0xFFFFFFFF:
		sum = 0xFFFFFFFE
	}
	le.PutUint32(base[508:], sum)
	return append(base, bin...)
}

func align8(n int) int { return (n + 7) &^ 7 }

// allocatedCell is the size field of an allocated cell of size n: -n as a 32-bit two's
// complement.
func allocatedCell(n int) uint32 { return ^u32(n) + 1 }
