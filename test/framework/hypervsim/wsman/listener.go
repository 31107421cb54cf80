package wsman

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// listener tracks accepted connections so that SetDown can cut them, and
// resets new connections while the server is down.
type listener struct {
	net.Listener
	mu    sync.Mutex
	down  bool
	conns map[*conn]struct{}
}

func newListener(l net.Listener) *listener {
	return &listener{Listener: l, conns: map[*conn]struct{}{}}
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.down {
			l.mu.Unlock()
			reset(c)
			continue
		}
		tc := &conn{Conn: c, l: l, accepted: time.Now()}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		return tc, nil
	}
}

// setDown marks the listener down or up; going down resets every open
// connection, idle or busy.
func (l *listener) setDown(down bool) {
	l.mu.Lock()
	l.down = down
	var cut []*conn
	if down {
		for c := range l.conns {
			cut = append(cut, c)
			delete(l.conns, c)
		}
	}
	l.mu.Unlock()
	for _, c := range cut {
		reset(c.Conn)
	}
}

// spareAfter is how long a connection may send nothing after being
// accepted before it counts as a spare rather than an arriving request.
const spareAfter = 300 * time.Millisecond

// arriving reports whether a connection accepted after since is still in
// its TLS or authentication handshake.
func (l *listener) arriving(since time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		if !c.settled.Load() && c.accepted.After(since) &&
			(c.requested.Load() || time.Since(c.accepted) < spareAfter) {
			return true
		}
	}
	return false
}

func (l *listener) remove(c *conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

type conn struct {
	net.Conn
	l         *listener
	once      sync.Once
	accepted  time.Time
	requested atomic.Bool // a request arrived on it
	settled   atomic.Bool // a request on it got past authentication
}

func (c *conn) Close() error {
	c.once.Do(func() { c.l.remove(c) })
	return c.Conn.Close()
}

// reset closes c with a TCP RST so the peer fails at once.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// arriving is listener.arriving of the running server.
func (s *Server) arriving(since time.Time) bool {
	_, ln := s.current()
	return ln.arriving(since)
}
