package nodenet

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// connect sends CONNECT address over the proxy's socket and returns the status line's code and
// what follows it.
func connect(t *testing.T, n *Network, address string) (int, io.Reader) {
	t.Helper()
	conn, err := net.Dial("unix", n.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := io.WriteString(conn, "CONNECT "+address+" HTTP/1.1\r\nHost: "+address+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, r
}

// TestRoutesFollowListeners: a connection to a simulated address reaches the listener opened for
// it; an address nobody listens on, or whose listener closed, is refused; the egress configuration
// names the socket.
func TestRoutesFollowListeners(t *testing.T) {
	n, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = n.Close() }()
	if !strings.Contains(n.EgressSelectorConfiguration(), "udsName: "+n.sock) {
		t.Errorf("egress configuration:\n%s", n.EgressSelectorConfiguration())
	}
	ln, err := n.Listen("10.1.0.5:10250")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Listen("10.1.0.5:10250"); err == nil {
		t.Error("a second listener took the same address")
	}
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.WriteString(c, "hello from the node")
			_ = c.Close()
		}
	}()
	code, conn := connect(t, n, "10.1.0.5:10250")
	if code != http.StatusOK {
		t.Fatalf("CONNECT to a listening node: %d", code)
	}
	if got, _ := io.ReadAll(conn); string(got) != "hello from the node" {
		t.Errorf("read %q through the proxy", got)
	}
	if code, _ := connect(t, n, "10.1.0.6:10250"); code != http.StatusServiceUnavailable {
		t.Errorf("CONNECT to an address nobody listens on: %d", code)
	}
	_ = ln.Close()
	if code, _ := connect(t, n, "10.1.0.5:10250"); code != http.StatusServiceUnavailable {
		t.Errorf("CONNECT after the node's listener closed: %d", code)
	}
}
