package logingate

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

type refusedErr struct{}

func (refusedErr) Error() string         { return "401" }
func (refusedErr) LoginOutcome() Outcome { return Refused }

type downErr struct{}

func (downErr) Error() string         { return "connection refused" }
func (downErr) LoginOutcome() Outcome { return Unreachable }

// burst runs n concurrent calls with key and returns how many reached the server.
func burst(g *Gate, key Key, n int, answer error) (int64, []error) {
	var calls atomic.Int64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.Do(context.Background(), key, func(context.Context) error {
				calls.Add(1)
				time.Sleep(10 * time.Millisecond)
				return answer
			})
		}()
	}
	wg.Wait()
	return calls.Load(), errs
}

func TestRefusedCredentialIsTriedOncePerSecretVersion(t *testing.T) {
	g := NewWithT(t)
	gate := &Gate{}
	key := Key{Namespace: "ns", Name: "creds", ResourceVersion: "1", Server: "vc"}
	calls, errs := burst(gate, key, 20, refusedErr{})
	g.Expect(calls).To(Equal(int64(1)))
	for _, err := range errs {
		var b *Blocked
		g.Expect(errors.As(err, &b)).To(BeTrue(), "%v", err)
		g.Expect(b.Refused).To(BeTrue())
		g.Expect(err.Error()).To(ContainSubstring("ns/creds"))
		g.Expect(err.Error()).To(ContainSubstring("update the Secret to retry"))
	}
	// Another server is another attempt; a new version of the Secret is tried again.
	calls, _ = burst(gate, Key{Namespace: "ns", Name: "creds", ResourceVersion: "1", Server: "other"}, 5, refusedErr{})
	g.Expect(calls).To(Equal(int64(1)))
	key.ResourceVersion = "2"
	calls, errs = burst(gate, key, 20, nil)
	g.Expect(calls).To(Equal(int64(20)), "a credential that worked is not serialised")
	g.Expect(errs).To(HaveEach(BeNil()))
	g.Expect(gate.refused).To(HaveLen(1), "only the other server's refusal is kept")
}

func TestUnreachableServerBacksOff(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(0, 0)
	gate := &Gate{Now: func() time.Time { return now }}
	key := Key{Namespace: "ns", Name: "creds", ResourceVersion: "1", Server: "vc"}
	calls, _ := burst(gate, key, 10, downErr{})
	g.Expect(calls).To(Equal(int64(1)))
	var b *Blocked
	for i, want := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second} {
		err := gate.Do(context.Background(), key, func(context.Context) error { t.Fatal("called while backing off"); return nil })
		g.Expect(errors.As(err, &b)).To(BeTrue())
		g.Expect(b.RetryIn(now)).To(Equal(want), "pause %d", i)
		g.Expect(errors.As(err, new(downErr))).To(BeTrue(), "the recorded failure is kept")
		now = now.Add(want)
		g.Expect(gate.Do(context.Background(), key, func(context.Context) error { return downErr{} })).To(HaveOccurred())
	}
	for range 10 {
		now = now.Add(time.Hour)
		_ = gate.Do(context.Background(), key, func(context.Context) error { return downErr{} })
	}
	g.Expect(errors.As(gate.Do(context.Background(), key, nil), &b)).To(BeTrue())
	g.Expect(b.RetryIn(now)).To(Equal(5 * time.Minute))
	now = now.Add(5 * time.Minute)
	g.Expect(gate.Do(context.Background(), key, func(context.Context) error { return nil })).To(Succeed())
	g.Expect(gate.Do(context.Background(), key, func(context.Context) error { return nil })).To(Succeed(), "success ends the backoff")
}

func TestWaitingForATurnHonoursTheContext(t *testing.T) {
	g := NewWithT(t)
	gate := &Gate{}
	key := Key{Server: "hung"}
	release := make(chan struct{})
	go func() {
		_ = gate.Do(context.Background(), key, func(context.Context) error { <-release; return nil })
	}()
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := gate.Do(ctx, key, func(context.Context) error { return nil })
	g.Expect(err).To(MatchError(context.DeadlineExceeded))
	close(release)
}

func TestNilGateCalls(t *testing.T) {
	var gate *Gate
	NewWithT(t).Expect(gate.Do(context.Background(), Key{}, func(context.Context) error { return nil })).To(Succeed())
}

type untrustedErr struct{}

func (untrustedErr) Error() string         { return "x509: unknown authority" }
func (untrustedErr) LoginOutcome() Outcome { return Untried }

// TestUntriedTeachesNothing: a failure before the credential reached the server (an untrusted
// certificate of one cluster's configuration) neither pauses the server for others nor proves the
// credential.
func TestUntriedTeachesNothing(t *testing.T) {
	g := NewWithT(t)
	gate := &Gate{}
	key := Key{Namespace: "ns", Name: "creds", ResourceVersion: "1", Server: "vc"}
	calls, _ := burst(gate, key, 3, untrustedErr{})
	g.Expect(calls).To(Equal(int64(3)))
	calls, _ = burst(gate, key, 5, refusedErr{})
	g.Expect(calls).To(Equal(int64(1)), "still unproven: the burst is serialised")
}
