package vcsim

import (
	"context"
	"sync"

	"github.com/vmware/govmomi/vim25/soap"

	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
)

// Calls counts the vSphere calls of one session cache by method (session.Sessions.WrapTransport,
// through Chain); it is safe for concurrent use, and a nil *Calls counts nothing.
type Calls struct {
	mu sync.Mutex
	n  map[string]int
}

// Wrap returns a round tripper that counts into c.
func (c *Calls) Wrap(next soap.RoundTripper) soap.RoundTripper {
	if c == nil {
		return next
	}
	return roundTripFunc(func(ctx context.Context, req, res soap.HasFault) error {
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[session.Method(req)]++
		c.mu.Unlock()
		return next.RoundTrip(ctx, req, res)
	})
}

// Snapshot returns the counts so far, by method.
func (c *Calls) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// Total is the number of calls so far.
func (c *Calls) Total() int {
	n := 0
	for _, v := range c.Snapshot() {
		n += v
	}
	return n
}

// Chain makes one session.Sessions.WrapTransport of several: the first sees a call first.
func Chain(wraps ...func(soap.RoundTripper) soap.RoundTripper) func(soap.RoundTripper) soap.RoundTripper {
	return func(rt soap.RoundTripper) soap.RoundTripper {
		for i := len(wraps) - 1; i >= 0; i-- {
			rt = wraps[i](rt)
		}
		return rt
	}
}

type roundTripFunc func(ctx context.Context, req, res soap.HasFault) error

func (f roundTripFunc) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	return f(ctx, req, res)
}
