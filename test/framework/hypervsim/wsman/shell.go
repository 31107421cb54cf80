package wsman

import (
	"bytes"
	"context"
	"regexp"
	"sync"
	"time"
)

// chunkSize is the most bytes of one stream sent in one Receive response.
const chunkSize = 32 << 10

// shell is a remote shell; its fields are guarded by Server.mu.
type shell struct {
	id    string
	owner string
	cmds  map[string]*command
}

// command is one command in a shell. Its handler runs once stdin ended,
// or with empty stdin when no Send came within StdinWait of a Receive.
type command struct {
	id    string
	req   Request       // without Stdin
	begun chan struct{} // closed by the first Send
	done  chan struct{} // closed when the result is known

	mu           sync.Mutex
	stdin        bytes.Buffer
	sent         bool // a Send arrived
	started      bool // the handler was started
	ended        bool // done is closed
	firstReceive time.Time
	res          Result
	outPos       int
	errPos       int
	cancel       context.CancelFunc
}

func newCommand(req Request) *command {
	return &command{
		id:    newID(""),
		req:   req,
		begun: make(chan struct{}),
		done:  make(chan struct{}),
	}
}

// addStdin buffers data and reports whether stdin has ended.
func (c *command) addStdin(data []byte, end bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started || c.ended {
		return false, errInvalid("stdin arrived after command " + c.id + " started")
	}
	c.stdin.Write(data)
	if !c.sent {
		c.sent = true
		close(c.begun)
	}
	return end, nil
}

// start runs the handler unless it already runs; with noStdin it does
// nothing once a Send has arrived.
func (s *Server) start(c *command, noStdin bool) {
	// The server's lock before the command's, never inside it: stop holds the server's lock
	// while it terminates each command.
	parent, _ := s.current()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started || c.ended || (noStdin && c.sent) {
		return
	}
	c.started = true
	req := c.req
	req.Stdin = bytes.Clone(c.stdin.Bytes())
	c.stdin = bytes.Buffer{}
	ctx, cancel := context.WithCancel(parent)
	c.cancel = cancel
	s.commands.Add(1)
	go func() {
		defer cancel()
		c.finish(s.opts.Handler.Run(ctx, req))
	}()
}

func (c *command) finish(res Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.res, c.ended = res, true
	close(c.done)
}

// terminate stops the command: its context is cancelled and, if it has
// not finished, it ends now with exit code 1 and no output.
func (c *command) terminate() {
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
	c.finish(Result{ExitCode: 1})
}

// waitingForStdin returns the time of the first Receive, and false if
// the command no longer waits for stdin.
func (c *command) waitingForStdin() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started || c.ended || c.sent {
		return time.Time{}, false
	}
	if c.firstReceive.IsZero() {
		c.firstReceive = time.Now()
	}
	return c.firstReceive, true
}

// next takes the next chunk of output; last is true once all is taken.
func (c *command) next() (stdout, stderr []byte, last bool, exit int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	take := func(b []byte, pos *int) []byte {
		n := min(len(b)-*pos, chunkSize)
		out := b[*pos : *pos+n]
		*pos += n
		return out
	}
	stdout = take(c.res.Stdout, &c.outPos)
	stderr = take(c.res.Stderr, &c.errPos)
	last = c.outPos == len(c.res.Stdout) && c.errPos == len(c.res.Stderr)
	return stdout, stderr, last, c.res.ExitCode
}

const (
	// maxArrival bounds the extra wait for a connection in its handshake.
	maxArrival = time.Second
	// arrivalSlack admits connections accepted just before the Receive.
	arrivalSlack = 50 * time.Millisecond
)

// receive waits until the command has output or the operation timeout
// passed.
func (s *Server) receive(ctx context.Context, c *command, limit time.Duration) error {
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	if first, ok := c.waitingForStdin(); ok && !s.opts.AwaitStdin {
		if err := s.awaitStdin(ctx, c, first, timeout.C); err != nil {
			return err
		}
	}
	select {
	case <-c.done:
		return nil
	case <-timeout.C:
		return errTimedOut()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitStdin waits for a first Send until StdinWait after the first
// Receive, then starts the command with empty stdin. The client sends its
// first Send while the Receive waits, often on a new connection, so the
// wait is extended (up to maxArrival) while a Send for the command is
// being read or authenticated, or a connection accepted since the
// Receive is still in its TLS or authentication handshake.
func (s *Server) awaitStdin(ctx context.Context, c *command, first time.Time, timeout <-chan time.Time) error {
	deadline := first.Add(s.opts.StdinWait)
	limit := deadline.Add(maxArrival)
	for {
		wait := time.NewTimer(time.Until(deadline))
		select {
		case <-c.begun:
		case <-c.done:
		case <-wait.C:
			now := time.Now()
			if now.Before(limit) && (s.sendArriving(c.id) || s.arriving(first.Add(-arrivalSlack))) {
				deadline = now.Add(10 * time.Millisecond)
				continue
			}
			s.start(c, true)
		case <-timeout:
			wait.Stop()
			return errTimedOut()
		case <-ctx.Done():
			wait.Stop()
			return ctx.Err()
		}
		wait.Stop()
		return nil
	}
}

// sendStream finds the CommandId of the Stream element of a Send.
var sendStream = regexp.MustCompile(`<\w+:Stream\b[^>]*\bCommandId="([^"]+)"`)

// sendTarget returns the CommandId a Send request body is for, looking
// only at its start where the header and the Stream tag are.
func sendTarget(data []byte) string {
	head := data[:min(len(data), 8<<10)]
	if !bytes.Contains(head, []byte(actionSend+"<")) {
		return ""
	}
	if m := sendStream.FindSubmatch(head); m != nil {
		return string(m[1])
	}
	return ""
}

// noteSend counts Send requests in progress for a command.
func (s *Server) noteSend(id string, delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sending[id] += delta; s.sending[id] <= 0 {
		delete(s.sending, id)
	}
}

func (s *Server) sendArriving(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sending[id] > 0
}
