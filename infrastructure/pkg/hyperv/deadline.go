package hyperv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// Deadlines bound one operation, from waiting for the host's turn to its result.
type Deadlines struct {
	// Long is for create, remove, guest and guestlogs (disk and file copies), default 2m.
	Long time.Duration
	// Short is for every other operation (reads, power, eject, host probe), default 30s.
	Short time.Duration
}

// For returns the deadline of an operation.
func (d Deadlines) For(op wire.Script) time.Duration {
	switch op.Name {
	case wire.OpCreate.Name, wire.OpRemove.Name, wire.OpGuest.Name, wire.OpGuestLogs.Name:
		return defaultDuration(d.Long, 2*time.Minute)
	}
	return defaultDuration(d.Short, 30*time.Second)
}

func defaultDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// bounded runs an operation within its deadline and through the credential gate. A host that
// does not answer in time costs the caller the deadline, never more: the call goes on in the
// background and holds the host's turn until the WinRM client gives up, so the next operation
// never shares the NTLM connection pool with it.
func (c *Conn) bounded(ctx context.Context, op wire.Script, act string, env []byte, nonce string) (json.RawMessage, error) {
	limit := c.deadlines.For(op)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var res json.RawMessage
	err := c.gate.Do(ctx, c.gateKey(), func(ctx context.Context) error {
		if !c.cfg.Basic {
			select {
			case c.ntlm <- struct{}{}:
			case <-ctx.Done():
				return c.late(ctx, op, act, limit, "waiting for the host's other operations")
			}
		}
		done := make(chan error, 1)
		go func() {
			r, err := c.run(ctx, op, act, env, nonce)
			if !c.cfg.Basic {
				<-c.ntlm
			}
			res = r
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return c.late(ctx, op, act, limit, "the operation")
		}
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// late is the error of an operation whose context ended: the caller's own cancellation as is,
// the deadline as an unreachable host.
func (c *Conn) late(ctx context.Context, op wire.Script, act string, limit time.Duration, what string) error {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s on Hyper-V host %s: %w", act, c.cfg.Name, ctx.Err())
	}
	return &HostError{Kind: wire.KindUnreachable, Host: c.cfg.Name, Op: op.Name, Action: act,
		Message: fmt.Sprintf("no answer within %s (%s); the host may be hung or overloaded", limit, what)}
}

// gateKey names this connection's credential and host for the gate.
func (c *Conn) gateKey() logingate.Key {
	k := c.cfg.Secret
	k.Server = net.JoinHostPort(c.cfg.Address, strconv.Itoa(c.cfg.Port))
	return k
}
