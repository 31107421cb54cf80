//go:build e2e

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

const isoSector = 2048

// readCidata reads a NoCloud config drive as Windows, and so cloudbase-init, sees it: the volume
// must be labelled cidata, and its root files are read by their Joliet names (Windows reads no
// Rock Ridge, and ISO 9660's own names are 8.3 upper case: "user-data" is only a Joliet name).
func readCidata(iso []byte) (map[string][]byte, error) {
	for s := 16; (s+1)*isoSector <= len(iso); s++ {
		vd := iso[s*isoSector : (s+1)*isoSector]
		if vd[0] == 255 { // volume descriptor set terminator
			break
		}
		// A supplementary volume descriptor with a UCS-2 escape sequence (%/@, %/C, %/E) is Joliet.
		if vd[0] != 2 || string(vd[1:6]) != "CD001" || vd[88] != '%' || vd[89] != '/' || !strings.ContainsRune("@CE", rune(vd[90])) {
			continue
		}
		if label := strings.TrimRight(ucs2(vd[40:72]), " \x00"); !strings.EqualFold(label, wire.ConfigDriveLabel) {
			return nil, fmt.Errorf("the volume is labelled %q, not %s: cloudbase-init does not read it", label, wire.ConfigDriveLabel)
		}
		dir, err := isoExtent(iso, vd[156:156+34])
		if err != nil {
			return nil, fmt.Errorf("root directory: %w", err)
		}
		return jolietFiles(iso, dir)
	}
	return nil, errors.New("no Joliet volume descriptor: Windows would not see the files' names")
}

// jolietFiles returns the plain files of a Joliet directory by name.
func jolietFiles(iso, dir []byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	for off := 0; off < len(dir); {
		n := int(dir[off])
		if n == 0 { // records do not cross sectors: the rest of this one is padding
			off = (off/isoSector + 1) * isoSector
			continue
		}
		if n < 34 || off+n > len(dir) || 33+int(dir[off+32]) > n {
			return nil, fmt.Errorf("malformed directory record at offset %d", off)
		}
		rec := dir[off : off+n]
		off += n
		nameLen := int(rec[32])
		if rec[25]&2 != 0 || nameLen <= 1 { // directories, and the 0x00/0x01 names of . and ..
			continue
		}
		data, err := isoExtent(iso, rec)
		if err != nil {
			return nil, err
		}
		files[strings.TrimSuffix(ucs2(rec[33:33+nameLen]), ";1")] = data
	}
	return files, nil
}

// isoExtent is the data a directory record points at (both-endian fields, little-endian half).
func isoExtent(iso, rec []byte) ([]byte, error) {
	start := int64(binary.LittleEndian.Uint32(rec[2:])) * isoSector
	end := start + int64(binary.LittleEndian.Uint32(rec[10:]))
	if end > int64(len(iso)) {
		return nil, fmt.Errorf("extent [%d, %d) beyond the image (%d bytes)", start, end, len(iso))
	}
	return iso[start:end], nil
}

// ucs2 decodes Joliet's big-endian UCS-2.
func ucs2(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}
