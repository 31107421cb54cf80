// Package wsman is a WS-Management (WinRM) server for tests.
//
// It speaks the remote shell protocol used by github.com/masterzen/winrm
// over HTTPS, with Basic and NTLM (NTLMv2) authentication. What a command
// does is decided by the Handler given in Options.
package wsman

import (
	"context"
	"crypto/tls"
	"time"
)

// Request is one command run in a shell, with its whole stdin (the server
// buffers stdin until the client sends End).
type Request struct {
	User      string   // authenticated user name; for NTLM without domain
	Command   string   // wsman:Command as sent by the client
	Arguments []string // wsman:Arguments
	Stdin     []byte
}

// Result is what a command produced.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
}

// Handler runs commands. The context is cancelled when the client
// signals the command, deletes its shell, or the server is closed.
type Handler interface {
	Run(ctx context.Context, r Request) Result
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, r Request) Result

// Run calls f.
func (f HandlerFunc) Run(ctx context.Context, r Request) Result { return f(ctx, r) }

// Options configure a Server.
type Options struct {
	// Users maps user name to password; Basic and NTLM accept them.
	// Names match ignoring case. Do not change the map after Start.
	Users map[string]string
	// Handler runs the commands. Required.
	Handler Handler
	// OperationTimeout is how long a Receive waits for output before
	// answering with the WS-Man TimedOut fault (the client retries).
	// A shorter w:OperationTimeout sent by the client wins. Default 5s.
	OperationTimeout time.Duration
	// StdinWait is how long after the first Receive a command waits for
	// a first Send before it runs with empty stdin. The client sends
	// Receive and Send concurrently, so "no stdin" can only be told by
	// waiting. The wait is extended, by up to 1s, while a connection
	// that may carry the Send is still in its handshake. Default 100ms.
	StdinWait time.Duration
	// AwaitStdin runs a command only once the client ended its stdin, as
	// a process that reads its stdin to the end does (capwin's runner
	// does), however late the Send; StdinWait is then unused. Without it,
	// a command with no Send in time runs with empty stdin, and a Send
	// held up longer (a busy client) is refused.
	AwaitStdin bool
	// StrictNTLM accepts an NTLM AUTHENTICATE only on the connection its
	// CHALLENGE was sent on, as Windows does. The masterzen client sends
	// overlapping requests (Send and Receive of one command, or several
	// commands) whose handshake legs may change connection, and then
	// fails with 401 now and then. By default any pending challenge of
	// the server is accepted, once.
	StrictNTLM bool
	// Addr is the TCP address to listen on. Default 127.0.0.1:0.
	Addr string
	// Certificate is the server certificate with its chain. Default a new
	// self-signed CA and a certificate it signed for 127.0.0.1 and localhost.
	Certificate *tls.Certificate
}

// Stats are counters since Start.
type Stats struct {
	Requests     int64 // HTTP requests received, incl. NTLM legs and dropped ones
	Shells       int64 // shells created
	Commands     int64 // commands handed to the Handler
	AuthFailures int64 // requests rejected for wrong credentials or SetAuthFailure
}

const (
	defaultOperationTimeout = 5 * time.Second
	defaultStdinWait        = 100 * time.Millisecond
)
