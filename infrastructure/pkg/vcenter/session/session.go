// Package session is how capwin talks to one vCenter: the logged-in sessions and their cache,
// the login (through the login gate), the property-collector watch that wakes machines, the
// task slots (--vcenter-max-tasks), the vSphere call metrics, vAPI logins and the words of a
// failed call. What a VM should look like is the VM services' (package vcenter), which use it.
package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/fault"
	govsession "github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	k8stypes "k8s.io/apimachinery/pkg/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/holders"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// Credentials say where and as whom to log in, and how to trust the server.
type Credentials struct {
	Server   string
	Username string
	Password string
	// Thumbprint is the server certificate's SHA-1 or SHA-256 fingerprint (colon-separated hex).
	Thumbprint string
	// CABundle is PEM; with neither it nor a thumbprint the system roots are used.
	CABundle []byte
	// Insecure skips verification; only when the user asked for it explicitly.
	Insecure bool
	// Secret is where Username and Password come from (Namespace, Name, ResourceVersion): a
	// refused login is not tried again until the Secret changes.
	Secret logingate.Key
	// Lent is what the cluster identity the login is borrowed from lends (nil: the cluster's own
	// Secret); Identity names it. Neither is part of the session's key.
	Lent     *infrav1.VCenterAllowed
	Identity string
}

// key identifies a session; a changed password or trust setting yields a new session.
func (c Credentials) key() string {
	h := sha256.New()
	for _, s := range []string{c.Server, c.Username, c.Password, strings.ToUpper(c.Thumbprint), string(c.CABundle), fmt.Sprint(c.Insecure)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Sessions caches one logged-in client per server+user+trust, shared by all reconciles.
type Sessions struct {
	// MaxIdleConnsPerHost should be at least the number of concurrent reconciles, so calls reuse
	// TLS connections instead of opening new ones (govmomi's default keeps two).
	MaxIdleConnsPerHost int
	// KeepAlive is the interval of the keep-alive call on an idle session.
	KeepAlive time.Duration
	// WrapTransport, when set, wraps every session's SOAP round tripper, as rest.Config's
	// WrapTransport does for the API server: it sees each vSphere call and its answer (call
	// counting, tracing, timing, fault injection). capwin_vcenter_calls_total counts outside it.
	WrapTransport func(soap.RoundTripper) soap.RoundTripper
	// UserAgent is sent with every call.
	UserAgent string
	// Gate keeps a refused identity and an unreachable vCenter from being tried on every reconcile.
	Gate *logingate.Gate
	// MaxTasks bounds the tasks (clone, reconfigure, power, destroy) this manager runs at once on
	// one vCenter server, whatever the sessions; 0 is no bound.
	MaxTasks int
	// Wake, when set, is told which VCenterMachine (namespace/name) a VM or task changed for:
	// every session then runs a property-collector loop over them (watchloop.go).
	Wake func(k8stypes.NamespacedName)
	// WatchWait is the longest wait of one WaitForUpdatesEx (default 5m).
	WatchWait time.Duration

	mu       sync.Mutex
	sessions map[string]*Session
	logins   map[string]*sync.Mutex
	// holders are the VCenterClusters (namespace/name) using each session: a session no cluster
	// uses is logged out, its keep-alive stopped and its connections closed.
	holders holders.Holders
	slots   taskSlots
	// values are what the VM services share across the pool's sessions (Session.Shared).
	values values
	// watches are the registries of the watch loops by session key (they outlive a session that
	// vCenter ended).
	watches map[string]*registry
}

// Session is a logged-in vCenter client plus what was looked up through it.
type Session struct {
	Client *vim25.Client
	key    string
	pool   *Sessions
	// values are what the VM services keep with this session (Value): lookups made through it.
	values values
	stop   func()
	// user logs in to the vAPI (REST) endpoint, which content libraries need.
	user *url.Userinfo
	// server is vCenter's host:port, the key of its task slots.
	server string
	// watch is what this session's watch loop follows (nil without one); unwatch ends the loop
	// and waits (bounded) until it destroyed its collector.
	watch   *registry
	unwatch func()
}

// Host is the server's host:port.
func (sess *Session) Host() string { return sess.server }

// Get returns the cached session for the credentials, logging in when there is none; holder (the
// VCenterCluster's namespace/name) uses it from now on, and a session it used before that no one
// uses any more is closed. Logins for one key are serialised so a burst of reconciles logs in once.
// vms is what the session's watch follows of a VM (the same on every call: the VM services').
func (s *Sessions) Get(ctx context.Context, holder string, cred Credentials, vms VMWatch) (*Session, error) {
	k := cred.key()
	if old := s.holders.Hold(holder, k); old != "" {
		s.close(old)
	}
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions, s.logins = map[string]*Session{}, map[string]*sync.Mutex{}
	}
	if sess := s.sessions[k]; sess != nil {
		s.mu.Unlock()
		return sess, nil
	}
	lock := s.logins[k]
	if lock == nil {
		lock = &sync.Mutex{}
		s.logins[k] = lock
	}
	s.mu.Unlock()

	lock.Lock()
	defer lock.Unlock()
	s.mu.Lock()
	sess := s.sessions[k]
	s.mu.Unlock()
	if sess != nil {
		return sess, nil
	}
	gateKey := cred.Secret
	gateKey.Server = cred.Server
	err := s.Gate.Do(ctx, gateKey, func(ctx context.Context) error {
		var err error
		sess, err = s.login(ctx, cred)
		return err
	})
	if err != nil {
		return nil, err
	}
	sess.key = k
	s.mu.Lock()
	defer s.mu.Unlock()
	if cached := s.sessions[k]; cached != nil || !s.holders.Used(k) {
		// Another login won the race (the key was closed and opened again meanwhile), or every
		// holder was released while this one logged in: do not keep a second session.
		go sess.logout(context.WithoutCancel(ctx))
		if cached != nil {
			return cached, nil
		}
		return sess, nil
	}
	s.watch(sess, vms)
	s.sessions[k] = sess
	return sess, nil
}

// Release forgets a holder (its VCenterCluster is gone) and closes the sessions no one uses.
func (s *Sessions) Release(holder string) {
	for _, k := range s.holders.Release(holder) {
		s.close(k)
	}
}

// count is the number of cached sessions.
func (s *Sessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// close logs a session out and forgets it.
func (s *Sessions) close(k string) {
	s.mu.Lock()
	sess := s.sessions[k]
	delete(s.sessions, k)
	delete(s.logins, k)
	delete(s.watches, k)
	s.mu.Unlock()
	if sess != nil {
		sess.logout(context.Background())
	}
}

// logout ends the session on vCenter (best effort, bounded) and closes its connections.
func (sess *Session) logout(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if sess.unwatch != nil {
		sess.unwatch()
	}
	_ = govsession.NewManager(sess.Client).Logout(ctx)
	sess.stop()
	sess.Client.CloseIdleConnections()
}

// invalidate drops a session (after NotAuthenticated); the next Get logs in again.
func (s *Sessions) invalidate(sess *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sess.key] == sess {
		delete(s.sessions, sess.key)
		sess.stop()
		sess.Client.CloseIdleConnections()
	}
}

// Close logs every session out.
func (s *Sessions) Close(ctx context.Context) {
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[string]*Session{}
	s.mu.Unlock()
	for _, sess := range all {
		sess.logout(ctx)
	}
}

// Check drops the session when vCenter says it is no longer logged in, and passes err on.
func (sess *Session) Check(err error) error {
	if err != nil && fault.Is(err, &types.NotAuthenticated{}) {
		sess.pool.invalidate(sess)
	}
	return err
}

// Unreadable returns the NotAuthenticated fault vCenter reported in place of the properties
// (vcsim answers a session that ended so, instead of failing the call): a VM or task read
// without them would look empty, not unreadable.
func Unreadable(content []types.ObjectContent) error {
	for _, oc := range content {
		for _, m := range oc.MissingSet {
			if f, ok := m.Fault.Fault.(*types.NotAuthenticated); ok {
				return soap.WrapVimFault(f)
			}
		}
	}
	return nil
}

// drainingTransport reads what is left of a response body on Close, so keep-alive works.
type drainingTransport struct{ next http.RoundTripper }

func (d drainingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := d.next.RoundTrip(req)
	if err == nil && res.Body != nil {
		res.Body = drainOnClose{res.Body}
	}
	return res, err
}

type drainOnClose struct{ io.ReadCloser }

func (b drainOnClose) Close() error {
	_, _ = io.Copy(io.Discard, io.LimitReader(b.ReadCloser, 1<<20))
	return b.ReadCloser.Close()
}
