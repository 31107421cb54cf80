package session

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/vmware/govmomi/fault"
	govsession "github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/session/keepalive"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

func (s *Sessions) login(ctx context.Context, cred Credentials) (*Session, error) {
	u, err := soap.ParseURL(cred.Server)
	if err != nil || u == nil {
		return nil, &LoginError{Reason: infrav1.LoginFailedReason, Err: fmt.Errorf("log in to vCenter: server %q is not a URL: %w", cred.Server, err)}
	}
	sc := soap.NewClient(u, cred.Insecure)
	if s.UserAgent != "" {
		sc.UserAgent = s.UserAgent
	}
	t := sc.DefaultTransport()
	t.MaxIdleConnsPerHost = max(s.MaxIdleConnsPerHost, 2)
	t.MaxIdleConns = max(t.MaxIdleConns, t.MaxIdleConnsPerHost)
	if cred.Thumbprint != "" {
		// Verify the pinned certificate ourselves: govmomi would first try (and fail) a
		// handshake against the system roots on every new connection.
		t.TLSClientConfig.InsecureSkipVerify = true
		t.TLSClientConfig.VerifyConnection = pinned(cred.Thumbprint, "vCenter")
	}
	if len(cred.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cred.CABundle) {
			return nil, &LoginError{Reason: infrav1.TLSVerificationFailedReason, Err: fmt.Errorf("log in to vCenter %s: caBundle holds no PEM certificate", u.Host)}
		}
		t.TLSClientConfig.RootCAs = pool
	}
	dial := t.DialTLSContext
	t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err == nil {
			connectionsOpened.Inc()
		}
		return conn, err
	}
	// Responses are drained before their connection goes back to the pool; an XML decoder that
	// stops at the envelope's end would otherwise leave bytes behind and cost a new TLS handshake.
	sc.Client.Transport = drainingTransport{next: t}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, classifyLogin(loginAction(u.Host, cred.Username), err)
	}
	ka := keepalive.NewHandlerSOAP(sc, max(s.KeepAlive, time.Minute), nil)
	var rt soap.RoundTripper = ka
	if s.WrapTransport != nil {
		rt = s.WrapTransport(rt)
	}
	vc.RoundTripper = metricsRoundTripper{next: rt}
	if err := govsession.NewManager(vc).Login(ctx, url.UserPassword(cred.Username, cred.Password)); err != nil {
		ka.Stop()
		return nil, classifyLogin(loginAction(u.Host, cred.Username), err)
	}
	return &Session{Client: vc, pool: s, stop: ka.Stop,
		user: url.UserPassword(cred.Username, cred.Password), server: u.Host}, nil
}

// pinned verifies that a server's certificate has the thumbprint (SHA-1 or SHA-256).
func pinned(thumbprint, server string) func(tls.ConnectionState) error {
	want := strings.ToUpper(thumbprint)
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return fmt.Errorf("%s presented no certificate", server)
		}
		leaf := cs.PeerCertificates[0]
		if want != soap.ThumbprintSHA256(leaf) && want != soap.ThumbprintSHA1(leaf) {
			return fmt.Errorf("%s: thumbprint does not match %s", server, thumbprint)
		}
		return nil
	}
}

// LoginError is a failed login with a condition reason.
type LoginError struct {
	Reason string
	Err    error
	// unreachable: vCenter did not answer (logingate backs off).
	unreachable bool
}

func (e *LoginError) Error() string { return e.Err.Error() }
func (e *LoginError) Unwrap() error { return e.Err }

// LoginOutcome tells the login gate what a failed login says: refused credentials wait for their
// Secret to change, an unreachable vCenter is tried again after a pause, an untrusted certificate
// means the credentials were never sent.
func (e *LoginError) LoginOutcome() logingate.Outcome {
	switch {
	case e.Reason == infrav1.AuthenticationFailedReason:
		return logingate.Refused
	case e.unreachable:
		return logingate.Unreachable
	}
	return logingate.Untried
}

// loginAction is the action of a login in words.
func loginAction(host, user string) string {
	return fmt.Sprintf("log in to vCenter %s as %s", host, user)
}

// classifyLogin gives a failed login its reason and words.
func classifyLogin(action string, err error) error {
	switch {
	case fault.Is(err, &types.InvalidLogin{}):
		return &LoginError{Reason: infrav1.AuthenticationFailedReason, Err: CallError(action, err, refusedWords)}
	case soap.IsCertificateUntrusted(err) || strings.Contains(err.Error(), "thumbprint does not match"):
		return &LoginError{Reason: infrav1.TLSVerificationFailedReason,
			Err: fmt.Errorf("%s: vCenter's certificate is not trusted (check thumbprint / caBundle): %w", action, err)}
	default:
		return &LoginError{Reason: infrav1.LoginFailedReason, Err: fmt.Errorf("%s: cannot reach vCenter: %w", action, err), unreachable: true}
	}
}

// refusedWords are the words of a refused login (the VM services' words of an InvalidLogin
// fault say the same).
func refusedWords(types.BaseMethodFault, string) string {
	return "vCenter refused the user name or password: fix them in the identity Secret"
}
