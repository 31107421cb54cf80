package main

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Windows security descriptors in their self-relative binary form (MS-DTYP 2.4.6), for the
// tar records and registry hives of the Windows HostProcess images.

// sid is a security identifier S-1-5-<sub...> (NT authority).
func sid(sub ...uint32) []byte {
	b := []byte{1, u8(len(sub)), 0, 0, 0, 0, 0, 5}
	for _, s := range sub {
		b = binary.LittleEndian.AppendUint32(b, s)
	}
	return b
}

var (
	sidSystem         = sid(18)      // NT AUTHORITY\SYSTEM
	sidAdministrators = sid(32, 544) // BUILTIN\Administrators
	sidUsers          = sid(32, 545) // BUILTIN\Users
)

// securityDescriptor is a self-relative descriptor with owner and group and, when allow is
// not empty, a DACL that gives each of those SIDs the access mask (inherited by subkeys).
func securityDescriptor(owner, group []byte, mask uint32, allow ...[]byte) []byte {
	const selfRelative, daclPresent = 0x8000, 0x0004
	control := uint16(selfRelative)
	var dacl []byte
	if len(allow) > 0 {
		control |= daclPresent
		var aces []byte
		for _, s := range allow {
			aces = append(aces, 0, 0x02) // ACCESS_ALLOWED_ACE_TYPE, CONTAINER_INHERIT_ACE
			aces = binary.LittleEndian.AppendUint16(aces, u16(8+len(s)))
			aces = binary.LittleEndian.AppendUint32(aces, mask)
			aces = append(aces, s...)
		}
		dacl = []byte{2, 0} // ACL_REVISION
		dacl = binary.LittleEndian.AppendUint16(dacl, u16(8+len(aces)))
		dacl = binary.LittleEndian.AppendUint16(dacl, u16(len(allow)))
		dacl = append(dacl, 0, 0)
		dacl = append(dacl, aces...)
	}
	const header = 20
	daclOff, ownerOff := 0, header+len(dacl)
	if dacl != nil {
		daclOff = header
	}
	groupOff := ownerOff + len(owner)
	b := []byte{1, 0}
	b = binary.LittleEndian.AppendUint16(b, control)
	b = binary.LittleEndian.AppendUint32(b, u32(ownerOff))
	b = binary.LittleEndian.AppendUint32(b, u32(groupOff))
	b = binary.LittleEndian.AppendUint32(b, 0) // no SACL
	b = binary.LittleEndian.AppendUint32(b, u32(daclOff))
	b = append(b, dacl...)
	b = append(b, owner...)
	return append(b, group...)
}

// u8, u16 and u32 are the values of the length, count and offset fields of these binary
// formats. They are a few hundred at most here: one that does not fit its field is a bug in
// this program, not something to write into an image.
func u8(n int) uint8 {
	if n < 0 || n > math.MaxUint8 {
		panic(fmt.Sprintf("%d does not fit an 8-bit field", n))
	}
	return uint8(n)
}

func u16(n int) uint16 {
	if n < 0 || n > math.MaxUint16 {
		panic(fmt.Sprintf("%d does not fit a 16-bit field", n))
	}
	return uint16(n)
}

func u32(n int) uint32 {
	if n < 0 || n > math.MaxUint32 {
		panic(fmt.Sprintf("%d does not fit a 32-bit field", n))
	}
	return uint32(n)
}
