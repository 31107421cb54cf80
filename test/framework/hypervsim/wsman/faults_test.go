package wsman

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"
)

func TestWrongCredentials(t *testing.T) {
	s := startServer(t, Options{})
	for _, a := range []auth{basic, ntlm} {
		for _, cred := range [][2]string{{testUser, "wrong"}, {"nobody", testPass}} {
			before := s.Stats().AuthFailures
			_, err := run(newClient(t, s, a, cred[0], cred[1], s.CACertPEM()), "x", nil)
			if err == nil || !strings.Contains(err.Error(), "401") {
				t.Errorf("%v %s/%s: err = %v, want a 401", a, cred[0], cred[1], err)
			}
			if s.Stats().AuthFailures <= before {
				t.Errorf("%v %s/%s: auth failure not counted", a, cred[0], cred[1])
			}
		}
	}
	if st := s.Stats(); st.Shells != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestUserNames(t *testing.T) {
	users := make(chan string, 1)
	s := startServer(t, Options{Handler: HandlerFunc(func(_ context.Context, r Request) Result {
		users <- r.User
		return Result{}
	})})
	for _, tc := range []struct {
		a          auth
		user, want string
	}{
		{basic, "administrator", "administrator"},
		{ntlm, `HVSIM\Administrator`, "Administrator"},
		{ntlm, "administrator", "administrator"},
	} {
		mustRun(t, newClient(t, s, tc.a, tc.user, testPass, s.CACertPEM()), "whoami", nil)
		if got := <-users; got != tc.want {
			t.Errorf("%v %q: handler saw user %q, want %q", tc.a, tc.user, got, tc.want)
		}
	}
}

func TestSetAuthFailure(t *testing.T) {
	s := startServer(t, Options{})
	clients := []*winrm.Client{client(t, s, basic), client(t, s, ntlm)}
	for _, c := range clients {
		mustRun(t, c, "before", nil)
	}
	s.SetAuthFailure(true)
	for i, c := range clients {
		before := s.Stats().AuthFailures
		if _, err := run(c, "during", nil); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("client %d: err = %v, want a 401", i, err)
		}
		if s.Stats().AuthFailures <= before {
			t.Errorf("client %d: auth failure not counted", i)
		}
	}
	s.SetAuthFailure(false)
	for _, c := range clients {
		mustRun(t, c, "after", nil)
	}
}

func TestCertificates(t *testing.T) {
	s := startServer(t, Options{})
	other := startServer(t, Options{})

	_, err := run(newClient(t, s, basic, testUser, testPass, other.CACertPEM()), "x", nil)
	var verr *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &verr) || !errors.As(err, &unknown) {
		t.Fatalf("err = %v, want a certificate verification error", err)
	}

	// The certificate is valid for localhost too.
	ep := winrm.NewEndpoint("localhost", s.Port, true, false, s.CACertPEM(), nil, nil, 10*time.Second)
	c, err := winrm.NewClient(ep, testUser, testPass)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, c, "x", nil)

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CACertPEM())
	conn, err := tls.Dial("tcp", s.URL.Host, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	leaf := conn.ConnectionState().PeerCertificates[0]
	if got, want := s.CertificateThumbprint(), thumbprint(leaf.Raw); got != want || len(got) != 3*sha256.Size-1 {
		t.Errorf("thumbprint %q, want %q", got, want)
	}
}

func TestSetDown(t *testing.T) {
	s := startServer(t, Options{})
	clients := []*winrm.Client{client(t, s, basic), client(t, s, ntlm)}
	for _, c := range clients {
		mustRun(t, c, "warm up", nil) // leaves idle keep-alive connections
	}
	s.SetDown(true)
	for i, c := range clients {
		start := time.Now()
		_, err := run(c, "x", nil)
		if err == nil {
			t.Fatalf("client %d: no error while down", i)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("client %d: failing took %v", i, d)
		}
		t.Logf("client %d while down: %v", i, err)
	}
	s.SetDown(false)
	for _, c := range clients {
		mustRun(t, c, "back", nil)
	}
}

func TestDropNext(t *testing.T) {
	s := startServer(t, Options{})
	for _, a := range []auth{basic, ntlm} {
		c := client(t, s, a)
		mustRun(t, c, "warm up", nil)
		before := s.Stats().Requests
		s.DropNext(1)
		if _, err := run(c, "x", nil); err == nil {
			t.Errorf("%v: no error with a dropped request", a)
		} else {
			t.Logf("%v with a dropped request: %v", a, err)
		}
		if s.Stats().Requests == before {
			t.Errorf("%v: dropped request not counted", a)
		}
		mustRun(t, c, "y", nil)
	}
}

func TestSetDelay(t *testing.T) {
	s := startServer(t, Options{})
	c := client(t, s, basic)
	mustRun(t, c, "warm up", nil)
	const delay = 200 * time.Millisecond
	s.SetDelay(delay)
	start := time.Now()
	mustRun(t, c, "slow", nil)
	// Create, Command, Receive, Signal and Delete are each delayed.
	if d := time.Since(start); d < 5*delay {
		t.Errorf("run took %v with a delay of %v per request", d, delay)
	}
	s.SetDelay(0)
	start = time.Now()
	mustRun(t, c, "fast", nil)
	if d := time.Since(start); d >= 5*delay {
		t.Errorf("run took %v after the delay was removed", d)
	}
}
