package hyperv

import (
	"net"
	"sync"
)

// sockets remembers the TCP connections a Conn's WinRM transport opened, so Close can end them:
// the WinRM library keeps idle connections without a timeout and offers no way to close them.
type sockets struct {
	dial func(network, addr string) (net.Conn, error)

	mu     sync.Mutex
	open   map[*socket]struct{}
	closed bool
}

// Dial opens a tracked connection.
func (s *sockets) Dial(network, addr string) (net.Conn, error) {
	c, err := s.dial(network, addr)
	if err != nil {
		return nil, err
	}
	sc := &socket{Conn: c, owner: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	if s.open == nil {
		s.open = map[*socket]struct{}{}
	}
	s.open[sc] = struct{}{}
	return sc, nil
}

// Close ends every open connection; later dials fail.
func (s *sockets) Close() {
	s.mu.Lock()
	open := s.open
	s.open, s.closed = nil, true
	s.mu.Unlock()
	for c := range open {
		_ = c.Conn.Close()
	}
}

// Len is the number of open connections.
func (s *sockets) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

type socket struct {
	net.Conn
	owner *sockets
}

func (c *socket) Close() error {
	c.owner.mu.Lock()
	delete(c.owner.open, c)
	c.owner.mu.Unlock()
	return c.Conn.Close()
}
