package hyperv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"

	"github.com/Azure/go-ntlmssp"
	"github.com/masterzen/winrm"
	"github.com/masterzen/winrm/soap"
)

// ntlmTransport is the WinRM client's NTLM transport (the WinRM library's, plus one rule). A
// host binds its NTLM challenge to the connection it sent it on, so an AUTHENTICATE refused on
// another connection (the first one closed between the legs, as when the WinRM service
// restarts) says nothing about the credentials: the handshake runs again, once. A refusal on the
// challenge's own connection is the credentials' and is reported at once, so a wrong password
// costs one failed logon on the host, not two.
type ntlmTransport struct {
	dial     func(network, addr string) (net.Conn, error)
	user     string
	password string
	url      string
	rt       http.RoundTripper
}

func (t *ntlmTransport) Transport(ep *winrm.Endpoint) error {
	scheme := "http"
	if ep.HTTPS {
		scheme = "https"
	}
	t.url = fmt.Sprintf("%s://%s/wsman", scheme, net.JoinHostPort(ep.Host, fmt.Sprint(ep.Port)))
	//nolint:gosec // InsecureSkipVerify only when the host's settings ask for it
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: ep.Insecure, ServerName: ep.TLSServerName},
		DialContext:           func(_ context.Context, network, addr string) (net.Conn, error) { return t.dial(network, addr) },
		ResponseHeaderTimeout: ep.Timeout,
	}
	if len(ep.CACert) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ep.CACert) {
			return errors.New("the CA bundle has no PEM certificate")
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	t.rt = ntlmssp.Negotiator{RoundTripper: legs{tr}}
	return nil
}

func (t *ntlmTransport) Post(_ *winrm.Client, msg *soap.SoapMessage) (string, error) {
	body := msg.String()
	for try := 0; ; try++ {
		h := &handshake{}
		req, err := http.NewRequestWithContext(context.WithValue(context.Background(), handshakeKey{}, h),
			http.MethodPost, t.url, strings.NewReader(body))
		if err != nil {
			return "", fmt.Errorf("impossible to create http request %w", err)
		}
		req.Header.Set("Content-Type", "application/soap+xml;charset=UTF-8")
		req.SetBasicAuth(t.user, t.password)
		res, err := t.rt.RoundTrip(req)
		if err == nil && res.StatusCode == http.StatusUnauthorized && h.lost != nil {
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			err = h.lost
		}
		if err != nil {
			return "", fmt.Errorf("unknown error %w", err)
		}
		if res.StatusCode == http.StatusUnauthorized && try == 0 && h.moved() {
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			continue
		}
		return read(res)
	}
}

// read returns a response's SOAP body, with the WinRM library's errors (transportError reads
// their status code).
func read(res *http.Response) (string, error) {
	defer func() { _ = res.Body.Close() }()
	if !strings.Contains(res.Header.Get("Content-Type"), "application/soap+xml") {
		return "", fmt.Errorf("http response error: %d - invalid content type", res.StatusCode)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", fmt.Errorf("http response error: %d - error while reading request body %w", res.StatusCode, err)
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("http error %d: %s", res.StatusCode, b)
	}
	return string(b), nil
}

type handshakeKey struct{}

// handshake records the connections the NEGOTIATE (answered by the CHALLENGE) and the
// AUTHENTICATE of one request went on, and the error of a leg that got no answer. The Negotiator
// answers a lost NEGOTIATE or AUTHENTICATE with the first, anonymous 401 and no error; that 401
// says nothing about the credentials, the lost connection does.
type handshake struct {
	negotiate, authenticate net.Conn
	lost                    error
}

// moved reports whether the AUTHENTICATE went on another connection than the CHALLENGE came on.
func (h *handshake) moved() bool {
	return h.negotiate != nil && h.authenticate != nil && h.negotiate != h.authenticate
}

// legs sees each leg of the Negotiator's exchange and notes its connection.
type legs struct{ next http.RoundTripper }

func (l legs) RoundTrip(req *http.Request) (*http.Response, error) {
	h, _ := req.Context().Value(handshakeKey{}).(*handshake)
	var slot *net.Conn
	if h != nil {
		switch ntlmMessage(req.Header.Get("Authorization")) {
		case 1:
			slot = &h.negotiate
		case 3:
			slot = &h.authenticate
		}
	}
	if slot != nil {
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { *slot = info.Conn },
		}))
	}
	res, err := l.next.RoundTrip(req)
	if err != nil && h != nil && slot != nil {
		h.lost = err
	}
	return res, err
}

// ntlmMessage is the NTLM message type (1 NEGOTIATE, 3 AUTHENTICATE) an Authorization header
// carries, or 0.
func ntlmMessage(header string) int {
	scheme, token, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "NTLM") && !strings.EqualFold(scheme, "Negotiate") {
		return 0
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(token))
	if err != nil || len(b) < 12 || string(b[:8]) != "NTLMSSP\x00" {
		return 0
	}
	return int(b[8])
}
