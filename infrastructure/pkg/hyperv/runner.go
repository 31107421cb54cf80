package hyperv

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/masterzen/winrm"
	"github.com/masterzen/winrm/soap"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// HostConfig is how to reach one host's WinRM HTTPS listener.
type HostConfig struct {
	Name, Address      string
	Port               int
	Username, Password string
	// Basic uses HTTP Basic instead of NTLM.
	Basic    bool
	CABundle []byte
	Insecure bool
	// Secret is where Username and Password come from (Namespace, Name, ResourceVersion): a
	// refused credential is not sent again until the Secret changes.
	Secret logingate.Key
	// Lent is what the cluster identity the login is borrowed from lends (nil: the cluster's own
	// Secret); Identity names it.
	Lent     *infrav1.HyperVAllowed
	Identity string
}

// Conn runs operations on one host. It is safe for concurrent use.
type Conn struct {
	cfg    HostConfig
	client *winrm.Client
	// ntlm serialises operations: the NTLM client's handshakes go wrong when requests of
	// concurrent commands share its connection pool (masterzen/winrm#142, Azure/go-ntlmssp#43).
	// A channel, so waiting for it ends with the caller's context.
	ntlm chan struct{}
	// gate stops sending a refused credential and backs off from an unreachable host (nil: off).
	gate *logingate.Gate
	// deadlines of one operation.
	deadlines Deadlines
	socks     *sockets
	// watch follows the VMs of machines waiting for their guest (nil: off).
	watch *guestWatch
}

// newNonce returns a random operation nonce.
func newNonce() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Dial prepares a connection (nothing is sent until the first operation).
func Dial(cfg HostConfig, timeout time.Duration) (*Conn, error) {
	if cfg.Port == 0 {
		cfg.Port = 5986
	}
	ep := winrm.NewEndpoint(cfg.Address, cfg.Port, true, cfg.Insecure, cfg.CABundle, nil, nil, timeout)
	params := winrm.NewParameters(fmt.Sprintf("PT%dS", max(int(timeout.Seconds()), 1)), "en-US", 153600)
	dialer := &net.Dialer{Timeout: min(timeout, 5*time.Second), KeepAlive: 30 * time.Second}
	socks := &sockets{dial: dialer.Dial}
	params.TransportDecorator = func() winrm.Transporter {
		if cfg.Basic {
			return &counting{next: winrm.NewClientWithDial(socks.Dial)}
		}
		return &counting{next: &ntlmTransport{dial: socks.Dial, user: cfg.Username, password: cfg.Password}}
	}
	c, err := winrm.NewClientWithParameters(ep, cfg.Username, cfg.Password, params)
	if err != nil {
		return nil, &HostError{Kind: wire.KindTLS, Host: cfg.Name, Message: err.Error()}
	}
	return &Conn{cfg: cfg, client: c, ntlm: make(chan struct{}, 1), socks: socks}, nil
}

// Close ends the connection's sockets; an operation still running fails.
func (c *Conn) Close() {
	if c.watch != nil {
		c.watch.close()
	}
	c.socks.Close()
}

// Run runs one operation with its input and decodes its result into out (may be nil). Its
// errors name the operation's action and object (Action) and the host.
func (c *Conn) Run(ctx context.Context, op wire.Script, in, out any) error {
	act := action(op, in)
	raw, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: encode the input: %w", act, err)
	}
	nonce := newNonce()
	env, err := json.Marshal(wire.Envelope{Lib: wire.Common.Text, Script: op.Text, Input: raw, Nonce: nonce})
	if err != nil {
		return fmt.Errorf("%s: encode the operation: %w", act, err)
	}
	start := time.Now()
	res, err := c.bounded(ctx, op, act, env, nonce)
	observeOperation(op.Name, err, time.Since(start))
	if err != nil || out == nil || len(res) == 0 {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return &HostError{Kind: wire.KindFailed, Host: c.cfg.Name, Op: op.Name, Action: act, Message: "bad result: " + err.Error()}
	}
	return nil
}

// run sends one operation envelope and returns its result document.
func (c *Conn) run(ctx context.Context, op wire.Script, act string, env []byte, nonce string) (json.RawMessage, error) {
	var stdout, stderr bytes.Buffer
	code, err := c.client.RunWithContextWithInput(ctx, wire.RunnerCommand, &stdout, &stderr, strings.NewReader(base64.StdEncoding.EncodeToString(env)))
	if err != nil {
		return nil, c.transportError(op, act, err)
	}
	res, found, err := parseOutcome(stdout.Bytes(), nonce)
	if err != nil || !found {
		return nil, &HostError{Kind: wire.KindFailed, Host: c.cfg.Name, Op: op.Name, Action: act,
			Message: fmt.Sprintf("no result (exit code %d): %s", code, tail(stderr.String(), 400))}
	}
	if !res.OK {
		e := &HostError{Kind: wire.KindFailed, Host: c.cfg.Name, Op: op.Name, Action: act}
		if res.Error != nil {
			e.Kind, e.Message = res.Error.Kind, res.Error.Message
		}
		return nil, e
	}
	return res.Result, nil
}

// parseOutcome finds the result line of the operation run with nonce in the runner's output: a
// whole line, capwin-result:<nonce>:<base64>.
func parseOutcome(stdout []byte, nonce string) (wire.Outcome, bool, error) {
	var o wire.Outcome
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(strings.TrimRight(sc.Text(), "\r"), wire.ResultPrefix+nonce+":")
		if !ok {
			continue
		}
		doc, err := base64.StdEncoding.DecodeString(line)
		if err != nil {
			return o, false, err
		}
		return o, true, json.Unmarshal(doc, &o)
	}
	return o, false, sc.Err()
}

// httpUnauthorized matches the WinRM client's errors for an HTTP 401 answer ("http error 401:
// ...", "http response error: 401 - ..."), and not a 401 elsewhere in a message, such as in the
// port of "read tcp 127.0.0.1:52144->127.0.0.1:40157: connection reset by peer".
var httpUnauthorized = regexp.MustCompile(`\bhttp (?:response )?error:? 401\b`)

func (c *Conn) transportError(op wire.Script, act string, err error) error {
	e := &HostError{Kind: wire.KindUnreachable, Host: c.cfg.Name, Op: op.Name, Action: act, Message: err.Error()}
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid),
		strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "x509: "):
		e.Kind = wire.KindTLS
	case httpUnauthorized.MatchString(err.Error()):
		e.Kind, e.Message = wire.KindAuth, fmt.Sprintf("user %q, HTTP 401", c.cfg.Username)
	}
	return e
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// counting counts WinRM HTTP round trips (capwin_winrm_round_trips_total).
type counting struct {
	next winrm.Transporter
}

func (t *counting) Transport(ep *winrm.Endpoint) error { return t.next.Transport(ep) }

func (t *counting) Post(c *winrm.Client, req *soap.SoapMessage) (string, error) {
	roundTrips.Inc()
	return t.next.Post(c, req)
}
