package wsman

import (
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	ntlmssp "github.com/Azure/go-ntlmssp"
	"github.com/masterzen/winrm"
)

func TestMD4(t *testing.T) {
	// RFC 1320 appendix A.5, and the well-known NT hash of "password".
	for in, want := range map[string]string{
		"":                           "31d6cfe0d16ae931b73c59d7e0c089c0",
		"a":                          "bde52cb31de33e46245e05fbdbd6fb24",
		"abc":                        "a448017aaf21d8525fc10ae87aa6729d",
		"message digest":             "d9130a8164549fe818874806e1c7014b",
		"abcdefghijklmnopqrstuvwxyz": "d79e1c308aa5bbcdeea8ed63df412da9",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789": "043f8582f241db351ce627e153e7f0e4",
		strings.Repeat("1234567890", 8):                                  "e33b4ddc9c38f2199c3e7b164fcc0536",
		string(utf16le("password")):                                      "8846f7eaee8fb117ad06bdd830b7586c",
	} {
		if got := hex.EncodeToString(md4([]byte(in))); got != want {
			t.Errorf("md4(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestVerifyNTLMv2(t *testing.T) {
	challenge := []byte("8bytes!!")
	cm := challengeMessage(challenge, time.Now())
	// The client takes the domain from the user name (go-ntlmssp v0.1.1): none for a local
	// account or a UPN, the part before the backslash for DOMAIN\user.
	for _, tc := range []struct {
		login, user, domain string
	}{
		{"Administrator", "Administrator", ""},
		{`CORP\bob`, "bob", "CORP"},
		{"bob@corp.example", "bob@corp.example", ""},
	} {
		msg, err := ntlmssp.NewAuthenticateMessage(cm, tc.login, testPass, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := parseAuthenticate(msg)
		if err != nil {
			t.Fatal(err)
		}
		if a.user != tc.user || a.domain != tc.domain {
			t.Errorf("%s: parsed user %q domain %q", tc.login, a.user, a.domain)
		}
		if !verifyNTLMv2(a, challenge, testPass) {
			t.Errorf("%s: right password rejected", tc.user)
		}
		if verifyNTLMv2(a, challenge, "wrong") {
			t.Errorf("%s: wrong password accepted", tc.user)
		}
		if verifyNTLMv2(a, []byte("otherchl"), testPass) {
			t.Errorf("%s: response to another challenge accepted", tc.user)
		}
	}
}

// TestNTLMConnections checks that NTLM authenticates connections, and
// where an AUTHENTICATE is accepted: with StrictNTLM only on the
// connection that got the CHALLENGE, else on any, once.
func TestNTLMConnections(t *testing.T) {
	for _, strict := range []bool{true, false} {
		s := startServer(t, Options{StrictNTLM: strict})
		body := winrm.NewOpenShellRequest(s.URL.String(), nil).String()
		one, two := rawClient(s), rawClient(s)

		negotiate, err := ntlmssp.NewNegotiateMessage("", "")
		if err != nil {
			t.Fatal(err)
		}
		status, header := rawPost(t, one, s, body, "Negotiate "+base64.StdEncoding.EncodeToString(negotiate))
		scheme, token, _ := strings.Cut(header.Get("WWW-Authenticate"), " ")
		if status != http.StatusUnauthorized || scheme != "Negotiate" || token == "" {
			t.Fatalf("NEGOTIATE: %d %q", status, header.Get("WWW-Authenticate"))
		}
		challenge, err := base64.StdEncoding.DecodeString(token)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := ntlmssp.NewAuthenticateMessage(challenge, testUser, testPass, nil)
		if err != nil {
			t.Fatal(err)
		}
		authz := "Negotiate " + base64.StdEncoding.EncodeToString(msg)

		type step struct {
			name  string
			c     *http.Client
			authz string
			want  int
		}
		steps := []step{
			{"AUTHENTICATE on another connection", two, authz, http.StatusOK},
			{"anonymous on that connection", two, "", http.StatusOK},
			{"anonymous on the first connection", one, "", http.StatusUnauthorized},
			{"AUTHENTICATE replayed", one, authz, http.StatusUnauthorized},
		}
		if strict {
			steps = []step{
				{"AUTHENTICATE on another connection", two, authz, http.StatusUnauthorized},
				{"AUTHENTICATE", one, authz, http.StatusOK},
				{"anonymous", one, "", http.StatusOK},
				{"anonymous on the other connection", two, "", http.StatusUnauthorized},
				{"AUTHENTICATE replayed", one, authz, http.StatusUnauthorized},
			}
		}
		for _, st := range steps {
			if status, _ := rawPost(t, st.c, s, body, st.authz); status != st.want {
				t.Errorf("strict %v: %s: status %d, want %d", strict, st.name, status, st.want)
			}
		}
	}
}

// rawClient is an HTTP client trusting s that keeps a single connection.
func rawClient(s *Server) *http.Client {
	tr := &http.Transport{MaxConnsPerHost: 1, TLSClientConfig: tlsConfig(s)}
	return &http.Client{Transport: tr}
}

// rawPost posts body to s and returns the status and header; the body is
// drained so the connection is kept.
func rawPost(t *testing.T, c *http.Client, s *Server, body, authz string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL.String(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/soap+xml;charset=UTF-8")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}
