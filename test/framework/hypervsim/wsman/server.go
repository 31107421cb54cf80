package wsman

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxBody limits request bodies.
const maxBody = 16 << 20

// Server is a running WS-Management endpoint (on 127.0.0.1 unless Options.Addr says otherwise).
type Server struct {
	URL  *url.URL // https://127.0.0.1:port/wsman
	Host string   // 127.0.0.1 (also when listening on all addresses)
	Port int

	opts  Options
	certs *certs

	// life guards what a restart replaces.
	life   sync.Mutex
	closed bool
	ln     *listener
	srv    *http.Server
	ctx    context.Context // cancelled by Close and Restart; parent of handler contexts
	cancel context.CancelFunc

	mu         sync.Mutex
	shells     map[string]*shell
	sending    map[string]int // Send requests in progress by CommandId
	challenges []*challenge   // NTLM challenges awaiting AUTHENTICATE

	drop     atomic.Int64
	delay    atomic.Int64
	authFail atomic.Bool
	lose     atomic.Int64

	requests, shellCount, commands, authFailures atomic.Int64
}

// Start listens on Options.Addr (default 127.0.0.1:0) with Options.Certificate
// (default a new self-signed CA and a server certificate for 127.0.0.1 and localhost).
func Start(opts Options) (*Server, error) {
	if opts.Handler == nil {
		return nil, errors.New("wsman: Options.Handler is required")
	}
	if opts.OperationTimeout <= 0 {
		opts.OperationTimeout = defaultOperationTimeout
	}
	if opts.StdinWait <= 0 {
		opts.StdinWait = defaultStdinWait
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	var c *certs
	var err error
	if opts.Certificate != nil {
		c, err = givenCerts(*opts.Certificate)
	} else {
		c, err = newCerts()
	}
	if err != nil {
		return nil, err
	}
	tcp, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	addr := tcp.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	opts.Addr = addr.String() // a restart listens here again
	s := &Server{
		URL:     &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(addr.Port)), Path: "/wsman"},
		Host:    host,
		Port:    addr.Port,
		opts:    opts,
		certs:   c,
		shells:  map[string]*shell{},
		sending: map[string]int{},
	}
	s.serve(tcp)
	return s, nil
}

// serve serves on tcp with a new context for the commands; s.life must be held (or s unshared).
func (s *Server) serve(tcp net.Listener) {
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.ln = newListener(tcp)
	s.srv = &http.Server{
		Handler: http.HandlerFunc(s.serveHTTP),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			cs := &connState{}
			if tc, ok := c.(*tls.Conn); ok {
				cs.conn, _ = tc.NetConn().(*conn)
			}
			return context.WithValue(ctx, connKey{}, cs)
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{s.certs.server},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}
	go func(srv *http.Server, ln net.Listener) { _ = srv.Serve(ln) }(s.srv, tls.NewListener(s.ln, cfg))
}

// CACertPEM returns the PEM of the CA that signed the server certificate (of
// a given Options.Certificate: the last certificate of its chain).
func (s *Server) CACertPEM() []byte { return append([]byte(nil), s.certs.caPEM...) }

// CertificateThumbprint returns the SHA-256 of the server certificate,
// upper-case hex pairs joined by colons.
func (s *Server) CertificateThumbprint() string { return s.certs.thumbprint }

// Close stops the server, closes all connections and cancels the
// contexts of running commands. It does not wait for handlers.
func (s *Server) Close() {
	s.life.Lock()
	defer s.life.Unlock()
	s.closed = true
	s.stop()
}

// Restart stops the server as Close does (the shells and their commands
// are lost), stays away for down (connections are refused), then listens
// again on the same address with the same certificate. ctx ends the wait.
func (s *Server) Restart(ctx context.Context, down time.Duration) error {
	s.life.Lock()
	if s.closed {
		s.life.Unlock()
		return net.ErrClosed
	}
	s.stop()
	s.life.Unlock()
	select {
	case <-ctx.Done():
	case <-time.After(down):
	}
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return net.ErrClosed
	}
	tcp, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return err
	}
	s.serve(tcp)
	return nil
}

// stop closes the listener and every connection and ends the shells; s.life is held.
func (s *Server) stop() {
	_ = s.srv.Close() // first: no answer of a cancelled command gets out
	s.cancel()
	s.mu.Lock()
	shells := s.shells
	s.shells, s.challenges = map[string]*shell{}, nil
	s.mu.Unlock()
	for _, sh := range shells {
		for _, c := range sh.cmds {
			c.terminate()
		}
	}
}

// current returns the context of the commands and the listener of the running server.
func (s *Server) current() (context.Context, *listener) {
	s.life.Lock()
	defer s.life.Unlock()
	return s.ctx, s.ln
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Requests:     s.requests.Load(),
		Shells:       s.shellCount.Load(),
		Commands:     s.commands.Load(),
		AuthFailures: s.authFailures.Load(),
	}
}

// SetDown makes the host unreachable: while down, new connections are
// reset at once, and going down resets all open connections.
func (s *Server) SetDown(down bool) {
	_, ln := s.current()
	ln.setDown(down)
}

// DropNext makes the next n HTTP requests lose their connection without
// any response.
func (s *Server) DropNext(n int) { s.drop.Add(int64(n)) }

// LoseNextChallenges makes the next n NTLM challenges end their connection
// and be forgotten, as a WinRM service restarted between the CHALLENGE and
// the AUTHENTICATE would: the client's AUTHENTICATE comes on a new
// connection and is refused.
func (s *Server) LoseNextChallenges(n int) { s.lose.Add(int64(n)) }

// SetDelay delays every answer by d; 0 turns it off.
func (s *Server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// SetAuthFailure makes every request fail with 401 whatever the
// credentials.
func (s *Server) SetAuthFailure(fail bool) { s.authFail.Store(fail) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	cs, _ := r.Context().Value(connKey{}).(*connState)
	if cs == nil {
		cs = &connState{}
	}
	if cs.conn != nil {
		cs.conn.requested.Store(true)
	}
	if s.takeDrop() {
		dropConn(w)
		return
	}
	// Read the whole body first: leaving it unread would make net/http
	// close the connection, which breaks the NTLM handshake.
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	// A Send on its way holds back running the command without stdin,
	// even before it is authenticated.
	if id := sendTarget(data); id != "" {
		s.noteSend(id, 1)
		defer s.noteSend(id, -1)
	}
	if d := time.Duration(s.delay.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if r.URL.Path != "/wsman" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	user, ok := s.authenticate(w, r, cs)
	if cs.conn != nil && (ok || r.Header.Get("Authorization") != "" && !s.handshaking(cs)) {
		cs.conn.settled.Store(true)
	}
	if !ok {
		return
	}
	s.dispatch(w, r, user, data)
}

func (s *Server) takeDrop() bool { return takeOne(&s.drop) }

// takeOne takes one from a fault counter, if it has any left.
func takeOne(n *atomic.Int64) bool {
	for {
		v := n.Load()
		if v <= 0 {
			return false
		}
		if n.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// dropConn closes the connection of w without writing anything.
func dropConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	c, _, err := hj.Hijack()
	if err == nil {
		_ = c.Close()
	}
}
