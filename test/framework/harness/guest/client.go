package guest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// newClient returns a clientset whose connections are its own, and a function that closes them.
// client-go caches transports by TLS config and keeps them, and their connections' goroutines,
// for the life of the process; a config with a Proxy function is never cached. Closing the
// dialled connections themselves (not just idle ones) makes a stopped guest's watches and
// HTTP/2 read loops end at once. The proxy function also keeps the machine's HTTP(S)_PROXY away
// from the local apiserver.
func (g *Guest) newClient(cfg *rest.Config) (*kubernetes.Clientset, func(), error) {
	conns := &connSet{conns: map[net.Conn]struct{}{}}
	cfg = rest.CopyConfig(cfg)
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	cfg.Dial = conns.dial
	if cfg.UserAgent == "" {
		cfg.UserAgent = "capwin-simulated-guest"
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cs, conns.closeAll, nil
}

// connSet tracks the open connections of one client.
type connSet struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func (s *connSet) dial(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return nil, errors.New("the guest's client is closed")
	}
	t := &trackedConn{Conn: c, set: s}
	s.conns[t] = struct{}{}
	return t, nil
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns, s.closed = map[net.Conn]struct{}{}, true
	s.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

type trackedConn struct {
	net.Conn
	set *connSet
}

func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.conns, c)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// keep registers a long-lived client's closer for Stop.
func (g *Guest) keep(closeConns func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closers = append(g.closers, closeConns)
}

func (g *Guest) setNodeName(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nodeName = name
}

// defaultHostname stands in for a computer name the hypervisor's metadata would give.
func defaultHostname(address string) string {
	if address == "" {
		return "win-guest"
	}
	return "win-" + strings.NewReplacer(".", "-", ":", "-").Replace(address)
}
