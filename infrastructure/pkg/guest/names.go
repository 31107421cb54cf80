// Package guest holds what both backends need to know about a guest OS: Windows computer
// names, metadata, providerIDs and node linkage.
package guest

import (
	"crypto/sha256"
	"math/big"
	"strconv"
	"strings"
)

// MaxComputerName is the longest Windows computer (NetBIOS) name.
const MaxComputerName = 15

// Shortened names keep a readable prefix and end in a hash of the full Machine name.
const (
	prefixLen = 6
)

// ComputerName returns the Windows computer name of a Machine: the sanitized Machine name when it
// fits in 15 characters, else a 6-character prefix, '-' and an 8-character base-36 hash of the
// full name. It is deterministic; taken reports names already used in the cluster, and on a
// collision the hash is salted until the name is free.
func ComputerName(machineName string, taken func(string) bool) string {
	clean := sanitize(machineName)
	if clean != "" && len(clean) <= MaxComputerName && !allDigits(clean) && !taken(clean) {
		return clean
	}
	prefix := strings.TrimRight(clean[:min(prefixLen, len(clean))], "-")
	if prefix == "" {
		prefix = "w"
	}
	for salt := 0; ; salt++ {
		name := prefix + "-" + hash(machineName, salt, MaxComputerName-len(prefix)-1)
		if !taken(name) {
			return name
		}
	}
}

// sanitize keeps what a Windows computer name and a Kubernetes node name both allow: lowercase
// letters, digits and inner hyphens.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		}
	}
	return strings.Trim(b.String(), "-")
}

func allDigits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// hash is n base-36 characters of SHA-256(name, salt), starting with a letter so the name never
// looks numeric.
func hash(name string, salt, n int) string {
	sum := sha256.Sum256([]byte(name + "\x00" + strconv.Itoa(salt)))
	digits := new(big.Int).SetBytes(sum[:]).Text(36)
	for len(digits) < n {
		digits = "0" + digits
	}
	out := []byte(digits[:n])
	out[0] = 'a' + out[0]%26
	return string(out)
}
