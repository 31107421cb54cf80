package wsman

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5" //nolint:gosec // G501: NTLMv2 is built on HMAC-MD5 ([MS-NLMP] 3.3.2), which the simulated host must speak
	"encoding/binary"
	"errors"
	"strings"
	"time"
	"unicode/utf16"
)

// NTLM message layout as in [MS-NLMP] 2.2.1; only NTLMv2 is accepted.

const (
	ntlmNegotiate    = 1
	ntlmChallenge    = 2
	ntlmAuthenticate = 3

	flagUnicode          = 0x00000001
	flagRequestTarget    = 0x00000004
	flagNTLM             = 0x00000200
	flagAlwaysSign       = 0x00008000
	flagTargetTypeServer = 0x00020000
	flagExtendedSecurity = 0x00080000
	flagTargetInfo       = 0x00800000
	flag128              = 0x20000000
	flag56               = 0x80000000

	challengeFlags = flagUnicode | flagRequestTarget | flagNTLM | flagAlwaysSign |
		flagTargetTypeServer | flagExtendedSecurity | flagTargetInfo | flag128 | flag56

	// ntlmTarget is the NetBIOS name the simulated host reports.
	ntlmTarget = "HVSIM"
)

var ntlmSignature = []byte("NTLMSSP\x00")

// ntlmType returns the message type of msg, or 0 if it is not NTLM.
func ntlmType(msg []byte) uint32 {
	if len(msg) < 12 || !bytes.Equal(msg[:8], ntlmSignature) {
		return 0
	}
	return binary.LittleEndian.Uint32(msg[8:])
}

// challengeMessage builds a CHALLENGE message carrying serverChallenge.
func challengeMessage(serverChallenge []byte, now time.Time) []byte {
	const header = 48
	target := utf16le(ntlmTarget)
	info := targetInfo(now)

	b := make([]byte, header, header+len(target)+len(info))
	copy(b, ntlmSignature)
	binary.LittleEndian.PutUint32(b[8:], ntlmChallenge)
	putField(b[12:], len(target), header)
	binary.LittleEndian.PutUint32(b[20:], challengeFlags)
	copy(b[24:32], serverChallenge)
	putField(b[40:], len(info), header+len(target))
	b = append(b, target...)
	return append(b, info...)
}

// targetInfo is the AV_PAIR list of the CHALLENGE message.
func targetInfo(now time.Time) []byte {
	var b []byte
	add := func(id uint16, v []byte) {
		b = binary.LittleEndian.AppendUint16(b, id)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(v))) //nolint:gosec // G115: an AV_PAIR value this server builds, a few dozen bytes
		b = append(b, v...)
	}
	// Windows FILETIME: 100ns ticks since 1601-01-01.
	ft := uint64(now.UnixNano()/100) + 116444736000000000
	add(2, utf16le(ntlmTarget))  // MsvAvNbDomainName
	add(1, utf16le(ntlmTarget))  // MsvAvNbComputerName
	add(4, utf16le("localhost")) // MsvAvDnsDomainName
	add(3, utf16le("localhost")) // MsvAvDnsComputerName
	add(7, binary.LittleEndian.AppendUint64(nil, ft))
	add(0, nil) // MsvAvEOL
	return b
}

// putField writes a field's length (as Len and MaxLen) and offset ([MS-NLMP] 2.2.1).
func putField(b []byte, n, offset int) {
	length := uint16(n) //nolint:gosec // G115: the length of a field this server builds, a few dozen bytes
	binary.LittleEndian.PutUint16(b, length)
	binary.LittleEndian.PutUint16(b[2:], length)
	binary.LittleEndian.PutUint32(b[4:], uint32(offset)) //nolint:gosec // G115: an offset into a message of a few hundred bytes
}

// authenticate is the part of an AUTHENTICATE message that is checked.
type authenticate struct {
	domain, user string
	nt           []byte // NtChallengeResponse
}

func parseAuthenticate(msg []byte) (authenticate, error) {
	var a authenticate
	if ntlmType(msg) != ntlmAuthenticate || len(msg) < 64 {
		return a, errors.New("not an NTLM AUTHENTICATE message")
	}
	field := func(at int) ([]byte, error) {
		n := int(binary.LittleEndian.Uint16(msg[at:]))
		off := int(binary.LittleEndian.Uint32(msg[at+4:]))
		if off+n > len(msg) {
			return nil, errors.New("NTLM field beyond message end")
		}
		return msg[off : off+n], nil
	}
	unicode := binary.LittleEndian.Uint32(msg[60:])&flagUnicode != 0
	text := func(b []byte) string {
		if unicode {
			return fromUTF16le(b)
		}
		return string(b)
	}
	var err error
	if a.nt, err = field(20); err != nil {
		return a, err
	}
	domain, err := field(28)
	if err != nil {
		return a, err
	}
	user, err := field(36)
	if err != nil {
		return a, err
	}
	a.domain, a.user = text(domain), text(user)
	return a, nil
}

// verifyNTLMv2 checks the NTProofStr of a against password.
func verifyNTLMv2(a authenticate, serverChallenge []byte, password string) bool {
	// NTLMv1 responses are 24 bytes; NTLMv2 is a 16 byte proof and a blob.
	if len(a.nt) <= 24 || len(serverChallenge) != 8 {
		return false
	}
	ntHash := md4(utf16le(password))
	ntowf := hmacMD5(ntHash, utf16le(strings.ToUpper(a.user)+a.domain))
	proof := hmacMD5(ntowf, serverChallenge, a.nt[16:])
	return hmac.Equal(proof, a.nt[:16])
}

func hmacMD5(key []byte, data ...[]byte) []byte {
	m := hmac.New(md5.New, key)
	for _, d := range data {
		m.Write(d)
	}
	return m.Sum(nil)
}

func utf16le(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

func fromUTF16le(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// plainUser strips a "DOMAIN\" prefix and an "@realm" suffix.
func plainUser(name string) string {
	if i := strings.LastIndex(name, `\`); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.Index(name, "@"); i >= 0 {
		name = name[:i]
	}
	return name
}
