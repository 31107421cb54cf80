package wsman

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/masterzen/winrm"
)

const (
	testUser = "Administrator"
	testPass = "S3cret!pass"
)

// echo answers with "ran <command>" on stdout and stdin copied to stderr.
var echo = HandlerFunc(func(_ context.Context, r Request) Result {
	return Result{Stdout: []byte("ran " + r.Command), Stderr: r.Stdin}
})

func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.Users == nil {
		opts.Users = map[string]string{testUser: testPass}
	}
	if opts.Handler == nil {
		opts.Handler = echo
	}
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// auth selects the client transport.
type auth int

const (
	basic auth = iota
	ntlm
)

func (a auth) String() string {
	if a == ntlm {
		return "ntlm"
	}
	return "basic"
}

// newClient returns a masterzen/winrm client for s that trusts caPEM.
func newClient(t *testing.T, s *Server, a auth, user, pass string, caPEM []byte) *winrm.Client {
	t.Helper()
	ep := winrm.NewEndpoint(s.Host, s.Port, true, false, caPEM, nil, nil, 20*time.Second)
	params := winrm.NewParameters("PT60S", "en-US", 153600)
	if a == ntlm {
		params.TransportDecorator = func() winrm.Transporter { return &winrm.ClientNTLM{} }
	}
	c, err := winrm.NewClientWithParameters(ep, user, pass, params)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func client(t *testing.T, s *Server, a auth) *winrm.Client {
	t.Helper()
	return newClient(t, s, a, testUser, testPass, s.CACertPEM())
}

type output struct {
	stdout, stderr []byte
	code           int
}

// run runs command with stdin (nil for none) and a 30s limit.
func run(c *winrm.Client, command string, stdin []byte) (output, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	code, err := c.RunWithContextWithInput(ctx, command, &out, &errb, in)
	return output{out.Bytes(), errb.Bytes(), code}, err
}

// mustRun runs command and fails the test on error.
func mustRun(t *testing.T, c *winrm.Client, command string, stdin []byte) output {
	t.Helper()
	out, err := run(c, command, stdin)
	if err != nil {
		t.Fatalf("run %q: %v", command, err)
	}
	return out
}

// pattern returns n bytes of a repeating, position-dependent pattern.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ byte(i>>8) ^ seed
	}
	return b
}
