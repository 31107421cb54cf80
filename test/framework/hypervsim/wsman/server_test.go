package wsman

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/masterzen/winrm"
)

func TestRunWithStdin(t *testing.T) {
	for _, a := range []auth{basic, ntlm} {
		t.Run(a.String(), func(t *testing.T) {
			var mu sync.Mutex
			var got []Request
			s := startServer(t, Options{Handler: HandlerFunc(func(_ context.Context, r Request) Result {
				mu.Lock()
				got = append(got, r)
				mu.Unlock()
				return Result{Stdout: []byte("ok"), Stderr: []byte("note"), ExitCode: 0}
			})})
			stdin := pattern(300<<10, 1)
			out := mustRun(t, client(t, s, a), "powershell -NoProfile -Command -", stdin)
			if string(out.stdout) != "ok" || string(out.stderr) != "note" || out.code != 0 {
				t.Fatalf("output = %q, %q, %d", out.stdout, out.stderr, out.code)
			}
			if len(got) != 1 {
				t.Fatalf("handler ran %d times", len(got))
			}
			r := got[0]
			if r.User != testUser || r.Command != "powershell -NoProfile -Command -" || len(r.Arguments) != 0 {
				t.Errorf("request = %q %q %q", r.User, r.Command, r.Arguments)
			}
			if !bytes.Equal(r.Stdin, stdin) {
				t.Errorf("stdin: got %d bytes, want %d", len(r.Stdin), len(stdin))
			}
			st := s.Stats()
			// Create, Command, 3 Sends, End, Receive, Signal, Delete at least.
			if st.Shells != 1 || st.Commands != 1 || st.Requests < 9 || st.AuthFailures != 0 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

func TestArguments(t *testing.T) {
	for _, a := range []auth{basic, ntlm} {
		t.Run(a.String(), func(t *testing.T) {
			got := make(chan Request, 1)
			s := startServer(t, Options{Handler: HandlerFunc(func(_ context.Context, r Request) Result {
				got <- r
				return Result{Stdout: r.Stdin, ExitCode: 7}
			})})
			sh, err := client(t, s, a).CreateShell()
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := sh.Close(); err != nil {
					t.Errorf("close the shell: %v", err)
				}
			}()
			args := []string{"-File", `C:\a b\x.ps1`, "a&b<c>"}
			cmd, err := sh.ExecuteWithContext(context.Background(), "powershell.exe", args...)
			if err != nil {
				t.Fatal(err)
			}
			var stdout []byte
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); stdout, _ = io.ReadAll(cmd.Stdout) }()
			go func() { defer wg.Done(); _, _ = io.Copy(io.Discard, cmd.Stderr) }()
			if _, err := cmd.Stdin.Write([]byte("hello ")); err != nil {
				t.Fatal(err)
			}
			if _, err := cmd.Stdin.Write([]byte("world")); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Stdin.Close(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			wg.Wait()
			_ = cmd.Close()
			r := <-got
			if r.Command != "powershell.exe" || !slices.Equal(r.Arguments, args) || string(r.Stdin) != "hello world" {
				t.Errorf("request = %q %q %q", r.Command, r.Arguments, r.Stdin)
			}
			if string(stdout) != "hello world" || cmd.ExitCode() != 7 {
				t.Errorf("stdout %q, exit code %d", stdout, cmd.ExitCode())
			}
		})
	}
}

func TestLargeOutput(t *testing.T) {
	stdout := pattern(1<<20, 2)
	stderr := pattern(100<<10, 3)
	s := startServer(t, Options{Handler: HandlerFunc(func(context.Context, Request) Result {
		return Result{Stdout: stdout, Stderr: stderr, ExitCode: 3}
	})})
	out := mustRun(t, client(t, s, basic), "type big.bin", nil)
	if !bytes.Equal(out.stdout, stdout) {
		t.Errorf("stdout: got %d bytes, want %d intact", len(out.stdout), len(stdout))
	}
	if !bytes.Equal(out.stderr, stderr) {
		t.Errorf("stderr: got %d bytes, want %d intact", len(out.stderr), len(stderr))
	}
	if out.code != 3 {
		t.Errorf("exit code %d, want 3", out.code)
	}
	// 1 MiB in 32 KiB chunks needs 32 Receives.
	if n := s.Stats().Requests; n < 32+4 {
		t.Errorf("only %d requests; output was not chunked", n)
	}
}

func TestSlowHandler(t *testing.T) {
	s := startServer(t, Options{
		OperationTimeout: 200 * time.Millisecond,
		Handler: HandlerFunc(func(ctx context.Context, r Request) Result {
			time.Sleep(700 * time.Millisecond)
			return Result{Stdout: []byte("slow " + r.Command)}
		}),
	})
	for _, a := range []auth{basic, ntlm} {
		start := time.Now()
		out := mustRun(t, client(t, s, a), "x", []byte("in"))
		if string(out.stdout) != "slow x" || out.code != 0 {
			t.Errorf("%v: output %q, %d", a, out.stdout, out.code)
		}
		if d := time.Since(start); d < 700*time.Millisecond {
			t.Errorf("%v: finished after %v", a, d)
		}
	}
	// Each command needs at least 3 timed out Receives before its result.
	if n := s.Stats().Requests; n < 2*(5+3) {
		t.Errorf("only %d requests; Receive did not time out", n)
	}
}

func TestCancelSignalsCommand(t *testing.T) {
	cancelled := make(chan struct{})
	s := startServer(t, Options{
		// The client looks at its context only between Receives.
		OperationTimeout: 200 * time.Millisecond,
		Handler: HandlerFunc(func(ctx context.Context, r Request) Result {
			<-ctx.Done()
			close(cancelled)
			return Result{}
		}),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := client(t, s, basic).RunWithContextWithInput(ctx, "sleep", io.Discard, io.Discard, nil)
	if err == nil {
		t.Fatal("no error from a cancelled command")
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("handler context was not cancelled")
	}
}

func TestConcurrent(t *testing.T) {
	s := startServer(t, Options{Handler: HandlerFunc(func(_ context.Context, r Request) Result {
		time.Sleep(20 * time.Millisecond)
		return Result{Stdout: append([]byte(r.Command+":"), r.Stdin...), ExitCode: len(r.Command)}
	})})
	// Each client runs five commands at once.
	clients := []*winrm.Client{client(t, s, basic), client(t, s, ntlm), client(t, s, basic), client(t, s, ntlm)}
	var wg sync.WaitGroup
	for i := range 20 {
		c := clients[i%len(clients)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			command := fmt.Sprintf("cmd-%d", i)
			var stdin []byte
			if i%3 != 0 {
				stdin = pattern(10<<10+i, byte(i)) //nolint:gosec // G115: i < 20
			}
			out, err := run(c, command, stdin)
			if err != nil {
				t.Errorf("%s: %v", command, err)
				return
			}
			want := append([]byte(command+":"), stdin...)
			if !bytes.Equal(out.stdout, want) || out.code != len(command) {
				t.Errorf("%s: got %d bytes, exit code %d", command, len(out.stdout), out.code)
			}
		}()
	}
	wg.Wait()
	if st := s.Stats(); st.Commands != 20 || st.Shells != 20 || st.AuthFailures != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// TestLateStdin: a client held up (a busy machine) sends its stdin 1.5s after the command, past
// StdinWait and the wait for arriving connections. With AwaitStdin the handler gets it, as a
// process reading its stdin to the end would (regression: hypervsim ran a capwin operation
// with empty input under load); without it, the command has run with empty stdin meanwhile.
func TestLateStdin(t *testing.T) {
	for _, await := range []bool{true, false} {
		t.Run(fmt.Sprintf("await=%t", await), func(t *testing.T) {
			got := make(chan []byte, 1)
			s := startServer(t, Options{AwaitStdin: await, Handler: HandlerFunc(func(_ context.Context, r Request) Result {
				got <- r.Stdin
				return Result{}
			})})
			sh, err := client(t, s, ntlm).CreateShell()
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sh.Close() }()
			cmd, err := sh.ExecuteWithContext(context.Background(), "powershell.exe")
			if err != nil {
				t.Fatal(err)
			}
			go func() { _, _ = io.Copy(io.Discard, cmd.Stdout) }()
			go func() { _, _ = io.Copy(io.Discard, cmd.Stderr) }()
			time.Sleep(1500 * time.Millisecond)
			_, _ = cmd.Stdin.Write([]byte("late input"))
			_ = cmd.Stdin.Close()
			cmd.Wait()
			want := "late input"
			if !await {
				want = ""
			}
			if stdin := <-got; string(stdin) != want {
				t.Fatalf("the handler got stdin %q, want %q", stdin, want)
			}
		})
	}
}
