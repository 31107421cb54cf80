package wsman

import (
	"encoding/binary"
	"math/bits"
)

// md4 returns the MD4 digest of msg (RFC 1320). NTLM needs it for the
// NT hash; it is not used for anything else.
func md4(msg []byte) []byte {
	h := [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}

	buf := make([]byte, 0, len(msg)+72)
	buf = append(buf, msg...)
	buf = append(buf, 0x80)
	for len(buf)%64 != 56 {
		buf = append(buf, 0)
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(msg))*8)

	var x [16]uint32
	for off := 0; off < len(buf); off += 64 {
		for i := range x {
			x[i] = binary.LittleEndian.Uint32(buf[off+4*i:])
		}
		a, b, c, d := h[0], h[1], h[2], h[3]

		// Round 1: F(x, y, z) = x&y | ^x&z.
		for _, i := range [4]int{0, 4, 8, 12} {
			a = bits.RotateLeft32(a+md4F(b, c, d)+x[i], 3)
			d = bits.RotateLeft32(d+md4F(a, b, c)+x[i+1], 7)
			c = bits.RotateLeft32(c+md4F(d, a, b)+x[i+2], 11)
			b = bits.RotateLeft32(b+md4F(c, d, a)+x[i+3], 19)
		}
		// Round 2: G(x, y, z) = majority, words taken by column.
		const k2 = 0x5a827999
		for i := 0; i < 4; i++ {
			a = bits.RotateLeft32(a+md4G(b, c, d)+x[i]+k2, 3)
			d = bits.RotateLeft32(d+md4G(a, b, c)+x[i+4]+k2, 5)
			c = bits.RotateLeft32(c+md4G(d, a, b)+x[i+8]+k2, 9)
			b = bits.RotateLeft32(b+md4G(c, d, a)+x[i+12]+k2, 13)
		}
		// Round 3: H(x, y, z) = x^y^z, words in bit-reversed order.
		const k3 = 0x6ed9eba1
		for _, i := range [4]int{0, 2, 1, 3} {
			a = bits.RotateLeft32(a+(b^c^d)+x[i]+k3, 3)
			d = bits.RotateLeft32(d+(a^b^c)+x[i+8]+k3, 9)
			c = bits.RotateLeft32(c+(d^a^b)+x[i+4]+k3, 11)
			b = bits.RotateLeft32(b+(c^d^a)+x[i+12]+k3, 15)
		}

		h[0] += a
		h[1] += b
		h[2] += c
		h[3] += d
	}

	out := make([]byte, 0, 16)
	for _, v := range h {
		out = binary.LittleEndian.AppendUint32(out, v)
	}
	return out
}

func md4F(x, y, z uint32) uint32 { return x&y | ^x&z }

func md4G(x, y, z uint32) uint32 { return x&y | x&z | y&z }
