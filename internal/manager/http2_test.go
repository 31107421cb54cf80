package manager

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/spf13/pflag"
)

// TestHTTP2IsOffByDefault: a server with the webhook's TLS options negotiates HTTP/1.1 with a
// client that offers h2 first, unless --enable-http2 is set; the metrics server gets the same.
func TestHTTP2IsOffByDefault(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "http/1.1"},
		{[]string{"--enable-http2"}, "h2"},
	} {
		o := NewOptions()
		fs := pflag.NewFlagSet("m", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		tlsOptions, metrics, err := ServerOptions(o)
		if err != nil {
			t.Fatal(err)
		}
		if got := negotiated(t, tlsOptions); got != c.want {
			t.Errorf("%v: webhook server negotiated %q, want %q", c.args, got, c.want)
		}
		if got := negotiated(t, metrics.TLSOpts); got != c.want {
			t.Errorf("%v: metrics server negotiated %q, want %q", c.args, got, c.want)
		}
	}
}

func negotiated(t *testing.T, opts []func(*tls.Config)) string {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	s.EnableHTTP2 = true
	s.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	for _, o := range opts {
		o(s.TLS)
	}
	s.StartTLS() // offers h2 unless the options chose the protocols
	defer s.Close()
	conn, err := tls.Dial("tcp", s.Listener.Addr().String(), &tls.Config{
		InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12}) //nolint:gosec // a test server's own certificate
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().NegotiatedProtocol
}
