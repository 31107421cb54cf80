package hyperv

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/masterzen/winrm"
	"github.com/masterzen/winrm/soap"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
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
	_, err := post(t, srv)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Post = %v, want the endpoint's 401", err)
	}
}

// TestLostHandshakeLegIsNotAnAuthFailure: a connection lost under the NEGOTIATE or the
// AUTHENTICATE (a WinRM service restarting, a network cut) is a connection failure, not "the host
// refused the credentials": go-ntlmssp v0.1.1 hands back the anonymous 401 when a leg fails, and
// a 401 would lock the host's credentials Secret out until it changes.
func TestLostHandshakeLegIsNotAnAuthFailure(t *testing.T) {
	for _, leg := range []int{1, 3} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch ntlmMessage(r.Header.Get("Authorization")) {
			case leg:
				c, _, _ := w.(http.Hijacker).Hijack()
				_ = c.Close()
				return
			case 1:
				w.Header().Set("WWW-Authenticate", "NTLM "+base64.StdEncoding.EncodeToString(challenge()))
			default:
				w.Header().Set("WWW-Authenticate", "NTLM")
			}
			w.WriteHeader(http.StatusUnauthorized)
		}))
		_, err := post(t, srv)
		srv.Close()
		if err == nil || strings.Contains(err.Error(), "401") {
			t.Fatalf("leg %d lost: Post = %v, want the lost connection", leg, err)
		}
		c := &Conn{cfg: HostConfig{Name: "hv1", Username: "capwin"}}
		if got := KindOf(c.transportError(wire.Script{Name: "op"}, "act", err)); got != wire.KindUnreachable {
			t.Fatalf("leg %d lost: kind %q, want %q (%v)", leg, got, wire.KindUnreachable, err)
		}
	}
}

// TestOnlyAnHTTP401IsAnAuthFailure: a connection error that names a port with 401 in it (a host
// on 127.0.0.1:40157 in the chaos soak) is an unreachable host; before, any "401" in the message
// locked the host's credentials Secret out until it changed.
func TestOnlyAnHTTP401IsAnAuthFailure(t *testing.T) {
	c := &Conn{cfg: HostConfig{Name: "hv1", Username: "capwin"}}
	for msg, want := range map[string]string{
		"unknown error Post \"https://127.0.0.1:40157/wsman\": read tcp 127.0.0.1:52144->127.0.0.1:40157: read: connection reset by peer": wire.KindUnreachable,
		"unknown error Post \"https://10.0.0.4:5986/wsman\": dial tcp 10.0.0.4:5986: connect: connection refused":                         wire.KindUnreachable,
		"http response error: 401 - invalid content type":                                                                                 wire.KindAuth,
		"http error 401: ":                       wire.KindAuth,
		"http error 500: <s:Fault>401</s:Fault>": wire.KindUnreachable,
	} {
		if got := KindOf(c.transportError(wire.Script{Name: "op"}, "act", errors.New(msg))); got != want {
			t.Errorf("%q: kind %q, want %q", msg, got, want)
		}
	}
}

func post(t *testing.T, srv *httptest.Server) (string, error) {
	t.Helper()
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	tr := &ntlmTransport{dial: net.Dial, user: "capwin", password: "pw"}
	if err := tr.Transport(&winrm.Endpoint{Host: host, Port: p}); err != nil {
		t.Fatal(err)
	}
	return tr.Post(nil, soap.NewMessage())
}

// challenge is a well-formed NTLM CHALLENGE without target information.
func challenge() []byte {
	b := make([]byte, 48)
	copy(b, "NTLMSSP\x00")
	binary.LittleEndian.PutUint32(b[8:], 2)
	binary.LittleEndian.PutUint32(b[16:], 48)
	binary.LittleEndian.PutUint32(b[20:], 0x00088207) // unicode, NTLM, always sign, extended session security
	binary.LittleEndian.PutUint32(b[44:], 48)
	return b
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
