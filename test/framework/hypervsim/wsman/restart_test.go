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
