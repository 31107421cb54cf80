package wsman

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/masterzen/winrm"
)

func tlsConfig(s *Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CACertPEM())
	return &tls.Config{RootCAs: pool}
}

// soapPost posts a SOAP body with Basic auth and returns status and body.
func soapPost(t *testing.T, s *Server, body string) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig(s)}}
	req, err := http.NewRequest(http.MethodPost, s.URL.String(), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/soap+xml;charset=UTF-8")
	req.SetBasicAuth(testUser, testPass)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/soap+xml") {
		t.Errorf("Content-Type %q", ct)
	}
	return resp.StatusCode, string(data)
}

var (
	messageID = regexp.MustCompile(`<a:MessageID>([^<]+)</a:MessageID>`)
	relatesTo = regexp.MustCompile(`<a:RelatesTo>([^<]+)</a:RelatesTo>`)
)

func TestProtocol(t *testing.T) {
	release := make(chan struct{})
	s := startServer(t, Options{
		OperationTimeout: 100 * time.Millisecond,
		Handler: HandlerFunc(func(ctx context.Context, r Request) Result {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return Result{}
		}),
	})
	defer close(release)
	url := s.URL.String()
	params := winrm.NewParameters("PT60S", "en-US", 153600)

	create := winrm.NewOpenShellRequest(url, params).String()
	status, resp := soapPost(t, s, create)
	if status != http.StatusOK {
		t.Fatalf("Create: %d %s", status, resp)
	}
	if got, want := relatesTo.FindStringSubmatch(resp), messageID.FindStringSubmatch(create); got == nil || got[1] != want[1] {
		t.Errorf("RelatesTo %v, want MessageID %v", got, want)
	}
	shellID, err := winrm.ParseOpenShellResponse(resp)
	if err != nil || shellID == "" {
		t.Fatalf("ShellId %q: %v", shellID, err)
	}
	status, resp = soapPost(t, s, winrm.NewExecuteCommandRequest(url, shellID, "x", nil, params).String())
	commandID, err := winrm.ParseExecuteCommandResponse(resp)
	if status != http.StatusOK || err != nil {
		t.Fatalf("Command: %d %v", status, err)
	}

	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"receive while running", winrm.NewGetOutputRequest(url, shellID, commandID, "stdout stderr", params).String(),
			[]string{"w:TimedOut", `Code="2150858793"`, "OperationTimeout"}},
		{"unknown shell", winrm.NewExecuteCommandRequest(url, "NO-SUCH-SHELL", "x", nil, params).String(),
			[]string{"w:InvalidSelectors", `Code="2150858843"`, "NO-SUCH-SHELL"}},
		{"unknown command", winrm.NewGetOutputRequest(url, shellID, "NO-SUCH-COMMAND", "stdout", params).String(),
			[]string{"w:InvalidParameter", "NO-SUCH-COMMAND"}},
		{"unsupported action", strings.Replace(create, "transfer/Create", "transfer/Get", 1),
			[]string{"a:ActionNotSupported", "transfer/Get"}},
		{"malformed envelope", "<not-soap/>", []string{"s:Sender", "malformed"}},
	} {
		status, resp := soapPost(t, s, tc.body)
		if status != http.StatusInternalServerError || !strings.Contains(resp, "<s:Fault>") {
			t.Errorf("%s: status %d, body %s", tc.name, status, resp)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(resp, w) {
				t.Errorf("%s: fault lacks %q: %s", tc.name, w, resp)
			}
		}
	}

	status, resp = soapPost(t, s, winrm.NewSignalRequest(url, shellID, commandID, params).String())
	if status != http.StatusOK || !strings.Contains(resp, "SignalResponse") {
		t.Errorf("Signal: %d %s", status, resp)
	}
	status, resp = soapPost(t, s, winrm.NewGetOutputRequest(url, shellID, commandID, "stdout stderr", params).String())
	if status != http.StatusOK || !strings.Contains(resp, "CommandState/Done") {
		t.Errorf("Receive after Signal: %d %s", status, resp)
	}
	status, _ = soapPost(t, s, winrm.NewDeleteShellRequest(url, shellID, params).String())
	if status != http.StatusOK {
		t.Errorf("Delete: %d", status)
	}
	status, resp = soapPost(t, s, winrm.NewDeleteShellRequest(url, shellID, params).String())
	if status != http.StatusInternalServerError || !strings.Contains(resp, "2150858843") {
		t.Errorf("second Delete: %d %s", status, resp)
	}
}

// TestUnknownShellThroughClient checks the client surfaces the fault.
// The client ignores the HTTP 500 status and hands the fault envelope to
// its parser, which fails on the fault action and keeps the body.
func TestUnknownShellThroughClient(t *testing.T) {
	s := startServer(t, Options{})
	_, err := client(t, s, basic).NewShell("NO-SUCH-SHELL").ExecuteWithContext(context.Background(), "x")
	var cmdErr *winrm.ExecuteCommandError
	if !errors.As(err, &cmdErr) || !strings.Contains(cmdErr.Body, "2150858843") {
		t.Errorf("err = %v", err)
	}
}

func TestOperationTimeoutHeader(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"PT2S":       2 * time.Second,
		"PT0.250S":   250 * time.Millisecond,
		"PT1M30S":    90 * time.Second,
		"PT1H2M3.5S": time.Hour + 2*time.Minute + 3500*time.Millisecond,
		"PT3H":       2 * time.Hour, // capped at the server's limit
		"":           2 * time.Hour,
		"P1D":        2 * time.Hour,
		"PT":         2 * time.Hour,
		"PTxS":       2 * time.Hour,
	} {
		var env envelope
		env.Header.Timeout = in
		if got := env.operationTimeout(2 * time.Hour); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}
