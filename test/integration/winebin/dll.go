package winebin

import (
	"bytes"
	"encoding/binary"
)

// forwarderDLL returns a Windows x64 DLL named dll that exports one function, name, forwarded to
// target ("module.Function"): the loader resolves the export to target, so the DLL has no code.
//
// Debian 12's Wine 8.0 has no bcryptprimitives.dll, and every Go program since Go 1.22 calls its
// ProcessPrng at start (runtime random numbers). advapi32's SystemFunction036 (RtlGenRandom) fills
// a buffer with random bytes and returns TRUE, the same contract.
func forwarderDLL(dll, name, target string) []byte {
	const (
		fileAlign    = 0x200
		sectionAlign = 0x1000
		sectionRVA   = 0x1000
		headersSize  = 0x200
		exportDirLen = 40
	)
	// The .edata section: export directory, address table, name table, ordinal table, strings.
	var eat uint32 = sectionRVA + exportDirLen
	names := eat + 4
	ordinals := names + 4
	dllName := ordinals + 2
	fnName := dllName + size(dll) + 1
	fwd := fnName + size(name) + 1
	end := fwd + size(target) + 1

	var sec bytes.Buffer
	le := func(v any) { _ = binary.Write(&sec, binary.LittleEndian, v) }
	le(struct {
		Characteristics, TimeDateStamp uint32
		Major, Minor                   uint16
		Name, Base                     uint32
		Functions, Names               uint32
		AddressOfFunctions             uint32
		AddressOfNames                 uint32
		AddressOfNameOrdinals          uint32
	}{Name: dllName, Base: 1, Functions: 1, Names: 1,
		AddressOfFunctions: eat, AddressOfNames: names, AddressOfNameOrdinals: ordinals})
	le(fwd) // an address inside the export directory's range makes it a forwarder
	le(fnName)
	le(uint16(0))
	for _, s := range []string{dll, name, target} {
		sec.WriteString(s)
		sec.WriteByte(0)
	}
	exportSize := end - sectionRVA
	raw := align(size(sec.String()), fileAlign)

	var out bytes.Buffer
	w := func(v any) { _ = binary.Write(&out, binary.LittleEndian, v) }
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x40) // e_lfanew
	out.Write(dos)
	out.WriteString("PE\x00\x00")
	w(struct {
		Machine, Sections                uint16
		TimeDateStamp, Symbols, NSymbols uint32
		OptionalHeaderSize, Flags        uint16
	}{Machine: 0x8664, Sections: 1, OptionalHeaderSize: 240, Flags: 0x2022}) // executable, large address aware, DLL
	w(struct {
		Magic                                uint16
		LinkerMajor, LinkerMinor             uint8
		CodeSize, DataSize, BSSSize          uint32
		EntryPoint, CodeBase                 uint32
		ImageBase                            uint64
		SectionAlignment, FileAlignment      uint32
		OSMajor, OSMinor, ImgMajor, ImgMinor uint16
		SubMajor, SubMinor                   uint16
		Win32Version, ImageSize, HeadersSize uint32
		CheckSum                             uint32
		Subsystem, DLLFlags                  uint16
		StackReserve, StackCommit            uint64
		HeapReserve, HeapCommit              uint64
		LoaderFlags, DirectoryCount          uint32
		ExportRVA, ExportSize                uint32
		OtherDirectories                     [15][2]uint32
	}{
		Magic: 0x20b, LinkerMajor: 14, DataSize: raw, CodeBase: sectionRVA,
		ImageBase: 0x180000000, SectionAlignment: sectionAlign, FileAlignment: fileAlign,
		OSMajor: 6, SubMajor: 6, ImageSize: sectionRVA + align(size(sec.String()), sectionAlign),
		HeadersSize: headersSize, Subsystem: 3, DLLFlags: 0x160,
		StackReserve: 0x100000, StackCommit: 0x1000, HeapReserve: 0x100000, HeapCommit: 0x1000,
		DirectoryCount: 16, ExportRVA: sectionRVA, ExportSize: exportSize,
	})
	w(struct {
		Name                        [8]byte
		VirtualSize, VirtualAddress uint32
		RawSize, RawPointer         uint32
		Relocations, LineNumbers    uint32
		NRelocations, NLineNumbers  uint16
		Characteristics             uint32
	}{Name: [8]byte{'.', 'e', 'd', 'a', 't', 'a'}, VirtualSize: size(sec.String()), VirtualAddress: sectionRVA,
		RawSize: raw, RawPointer: headersSize, Characteristics: 0x40000040}) // initialized data, readable
	out.Write(make([]byte, headersSize-out.Len()))
	out.Write(sec.Bytes())
	out.Write(make([]byte, int(raw)-sec.Len()))
	return out.Bytes()
}

func align(n, a uint32) uint32 { return (n + a - 1) / a * a }

// size is the length of a string of this file (names and a section of a few hundred bytes).
func size(s string) uint32 {
	if len(s) > 1<<16 {
		panic("winebin: the forwarder DLL's strings are short")
	}
	return uint32(len(s)) //nolint:gosec // G115: bounded just above
}
