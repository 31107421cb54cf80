// Package logingate keeps capwin from locking out service accounts: a credential a server refused
// is not tried again until its Secret changes, and a server that cannot be reached is tried again
// only after a growing pause. One Gate is shared by every worker of the manager.
package logingate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Key is one credential, as stored in one version of a Secret, used against one server.
type Key struct {
	Namespace, Name, ResourceVersion string
	Server                           string
}

// Outcome is what a failed call says about the credential and the server.
type Outcome int

// Outcomes. Errors that do not classify themselves (Classified) count as Untried.
const (
	// Accepted: the server took the credential (an operation that failed on its own).
	Accepted Outcome = iota
	// Refused: the server refused the credential (vCenter InvalidLogin, WinRM 401).
	Refused
	// Unreachable: the server could not be reached or did not answer in time.
	Unreachable
	// Untried: the credential did not reach the server (its certificate is not trusted, the
	// caller gave up); nothing is learnt.
	Untried
)

// Classified is implemented by errors that know their Outcome.
type Classified interface{ LoginOutcome() Outcome }

// outcome classifies a call's error.
func outcome(err error) Outcome {
	if err == nil {
		return Accepted
	}
	var c Classified
	if errors.As(err, &c) {
		return c.LoginOutcome()
	}
	return Untried
}

// Gate records refused credentials and unreachable servers. The zero value is ready to use with
// backoff from 5s to 5m; a nil Gate lets every call through.
type Gate struct {
	// Backoff is the first pause after a server could not be reached; it doubles up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	refused map[Key]error
	proven  map[Key]bool
	servers map[string]*pause
	turns   map[Key]chan struct{}
}

// pause is a server's backoff.
type pause struct {
	until time.Time
	delay time.Duration
	err   error
}

// Do runs call unless key's credential was refused or its server is backing off. Until a
// credential has worked once, calls with it wait for each other, so a burst of workers makes one
// attempt. Errors of refused or blocked calls are *Blocked.
func (g *Gate) Do(ctx context.Context, key Key, call func(context.Context) error) error {
	if g == nil {
		return call(ctx)
	}
	turn, err := g.admit(ctx, key)
	if err != nil {
		return err
	}
	err = call(ctx)
	g.record(key, err)
	if turn != nil {
		<-turn
	}
	return g.blocked(key, err)
}

// admit returns nil when the call may go, and the turn it holds while the credential is unproven.
func (g *Gate) admit(ctx context.Context, key Key) (chan struct{}, error) {
	g.mu.Lock()
	if err := g.check(key); err != nil || g.proven[key] {
		g.mu.Unlock()
		return nil, err
	}
	if g.turns == nil {
		g.turns = map[Key]chan struct{}{}
	}
	turn := g.turns[key]
	if turn == nil {
		turn = make(chan struct{}, 1)
		g.turns[key] = turn
	}
	g.mu.Unlock()
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The call before this one may have settled the question.
	g.mu.Lock()
	err, proven := g.check(key), g.proven[key]
	g.mu.Unlock()
	if err == nil && !proven {
		return turn, nil
	}
	<-turn
	return nil, err
}

// check returns a *Blocked when key may not be used now (g.mu held).
func (g *Gate) check(key Key) error {
	if err, ok := g.refused[key]; ok {
		return &Blocked{Key: key, Refused: true, Err: err}
	}
	if p := g.servers[key.Server]; p != nil && g.now().Before(p.until) {
		return &Blocked{Key: key, Until: p.until, Err: p.err}
	}
	return nil
}

// record notes the outcome of a call.
func (g *Gate) record(key Key, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	o := outcome(err)
	if o == Refused || o == Accepted {
		g.forgetOtherVersions(key)
	}
	switch o {
	case Refused:
		if g.refused == nil {
			g.refused = map[Key]error{}
		}
		g.refused[key] = err
		delete(g.proven, key)
	case Unreachable:
		if g.servers == nil {
			g.servers = map[string]*pause{}
		}
		p := g.servers[key.Server]
		if p == nil {
			p = &pause{}
			g.servers[key.Server] = p
		}
		p.delay = min(max(2*p.delay, g.backoff()), g.maxBackoff())
		p.until, p.err = g.now().Add(p.delay), err
	case Accepted:
		if g.proven == nil {
			g.proven = map[Key]bool{}
		}
		g.proven[key] = true
		delete(g.servers, key.Server)
	}
}

// forgetOtherVersions drops what was learnt about other versions of key's Secret on key's server:
// only the newest version is used again (g.mu held).
func (g *Gate) forgetOtherVersions(key Key) {
	other := func(k Key) bool {
		return k != key && k.Namespace == key.Namespace && k.Name == key.Name && k.Server == key.Server
	}
	for k := range g.refused {
		if other(k) {
			delete(g.refused, k)
		}
	}
	for k := range g.proven {
		if other(k) {
			delete(g.proven, k)
		}
	}
	for k := range g.turns {
		if other(k) {
			delete(g.turns, k)
		}
	}
}

// blocked turns the error of a refused or unreachable call into a *Blocked.
func (g *Gate) blocked(key Key, err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var b error
	if o := outcome(err); o == Refused || o == Unreachable {
		b = g.check(key)
	}
	if b == nil {
		return err
	}
	return b
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Gate) backoff() time.Duration {
	if g.Backoff > 0 {
		return g.Backoff
	}
	return 5 * time.Second
}

func (g *Gate) maxBackoff() time.Duration {
	if g.MaxBackoff > 0 {
		return g.MaxBackoff
	}
	return 5 * time.Minute
}

// Blocked says why a credential is not used now: the server refused it (until its Secret
// changes) or the server is backing off (until Until). Err is the failure recorded.
type Blocked struct {
	Key     Key
	Refused bool
	Until   time.Time
	Err     error
}

func (b *Blocked) Error() string {
	if b.Refused {
		return fmt.Sprintf("%s refused the credentials of Secret %s/%s (resourceVersion %s); they are not tried again until the Secret changes: update the Secret to retry: %v",
			b.Key.Server, b.Key.Namespace, b.Key.Name, b.Key.ResourceVersion, b.Err)
	}
	return fmt.Sprintf("%s could not be reached; next attempt after %s: %v", b.Key.Server, b.Until.UTC().Format(time.RFC3339), b.Err)
}

func (b *Blocked) Unwrap() error { return b.Err }

// RetryIn is how long to wait before looking again (0 for a refused credential: only a Secret
// change helps).
func (b *Blocked) RetryIn(now time.Time) time.Duration {
	if b.Refused {
		return 0
	}
	return max(b.Until.Sub(now), 0)
}
