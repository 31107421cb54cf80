package wsman

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestRestart: a command running when the server restarts is cancelled and its client fails;
// while down, connections are refused; afterwards the same address and certificate serve the
// same client again.
func TestRestart(t *testing.T) {
	started := make(chan struct{}, 1)
	s := startServer(t, Options{Handler: HandlerFunc(func(ctx context.Context, r Request) Result {
		if r.Command == "hang" {
			started <- struct{}{}
			<-ctx.Done()
		}
		return Result{Stdout: []byte("ran " + r.Command)}
	})})
	for _, a := range []auth{basic, ntlm} {
		t.Run(a.String(), func(t *testing.T) {
			c := client(t, s, a)
			mustRun(t, c, "before", nil)
			failed := make(chan error, 1)
			go func() {
				out, err := run(c, "hang", nil)
				if err == nil && string(out.stdout) == "ran hang" {
					err = nil // the answer arrived: the restart did not cut it
				} else if err == nil {
					err = errors.New("cut") // masterzen/winrm reports a cut Receive as exit code 16001 only
				}
				failed <- err
			}()
			<-started
			restarted := make(chan error, 1)
			go func() { restarted <- s.Restart(context.Background(), 300*time.Millisecond) }()
			if err := <-failed; err == nil {
				t.Error("a command cut by the restart succeeded")
			}
			if conn, err := net.DialTimeout("tcp", s.URL.Host, time.Second); err == nil {
				_ = conn.Close()
				t.Error("connected while the server was down")
			}
			if err := <-restarted; err != nil {
				t.Fatal(err)
			}
			if out := mustRun(t, c, "after", nil); string(out.stdout) != "ran after" {
				t.Errorf("after the restart: %q", out.stdout)
			}
		})
	}
}

// TestCloseWhileACommandStarts: a command starting (its first Send) while the server closes
// or restarts. start once took the command's lock and then the server's; stop takes the
// server's and then each command's, so the two waited for each other for good (the Hyper-V suite
// hung in TestMain's Close for 28 minutes, in a loaded CI run).
func TestCloseWhileACommandStarts(t *testing.T) {
	s := startServer(t, Options{Handler: HandlerFunc(func(context.Context, Request) Result { return Result{} })})
	c := newCommand(Request{Command: "x"})
	s.life.Lock() // a Close or Restart in progress
	started := make(chan struct{})
	go func() {
		s.start(c, false)
		close(started)
	}()
	time.Sleep(50 * time.Millisecond) // start runs up to the server's lock
	terminated := make(chan struct{})
	go func() {
		c.terminate() // what stop does, under the server's lock
		close(terminated)
	}()
	select {
	case <-terminated:
		s.life.Unlock()
	case <-time.After(5 * time.Second):
		s.life.Unlock() // lets the two go on, so that the server can close at the test's end
		t.Fatal("terminating a command that is starting waits for good while the server's lock is held")
	}
	<-started
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		t.Error("a command terminated before it started ran anyway")
	}
}
