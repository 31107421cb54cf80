package hyperv

import (
	"encoding/base64"
	"encoding/binary"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/masterzen/winrm"
	"github.com/masterzen/winrm/soap"
)

// TestMalformedNTLMChallengeIsAnError: a WinRM endpoint (or whoever answers in its place) that
// sends an NTLM CHALLENGE whose target name points past the end of the message gets its refusal
// back as an error, not a panic of the manager (GO-2026-5543: go-ntlmssp before v0.1.1 sliced the
// message with an offset that overflowed; v0.1.1 drops the handshake and returns the 401).
func TestMalformedNTLMChallengeIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Authorization"), "NTLM ") {
			w.Header().Set("WWW-Authenticate", "NTLM "+base64.StdEncoding.EncodeToString(malformedChallenge()))
		} else {
			w.Header().Set("WWW-Authenticate", "NTLM")
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	tr := &ntlmTransport{dial: net.Dial, user: "capwin", password: "pw"}
	if err := tr.Transport(&winrm.Endpoint{Host: host, Port: p}); err != nil {
		t.Fatal(err)
	}
	_, err := tr.Post(nil, soap.NewMessage())
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Post = %v, want the endpoint's 401", err)
	}
}

// malformedChallenge is an NTLM CHALLENGE message whose TargetName field says 16 bytes at offset
// 0xFFFFFFF8: offset plus length overflows 32 bits.
func malformedChallenge() []byte {
	b := make([]byte, 48)
	copy(b, "NTLMSSP\x00")
	binary.LittleEndian.PutUint32(b[8:], 2)           // CHALLENGE
	binary.LittleEndian.PutUint16(b[12:], 16)         // TargetName.Len
	binary.LittleEndian.PutUint16(b[14:], 16)         // TargetName.MaxLen
	binary.LittleEndian.PutUint32(b[16:], 0xFFFFFFF8) // TargetName.BufferOffset
	return b
}
