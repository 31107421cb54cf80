// Package vcenter_test runs the production VCenterMachine reconciler (infrastructure/reconcilers/machine)
// against a real kube-apiserver and govmomi's vcsim: lifecycle, restarts, faults, placement, tenancy
// and scale. The Hyper-V suites are beside it in test/integration/hyperv.
package vcenter_test

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/vmware/govmomi/pbm/simulator" // SPBM endpoint for storage policies
	"github.com/vmware/govmomi/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator" // content libraries
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	"github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/internal/manager"
	"github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/internal/test/vcsim/templates"
	vcsimops "github.com/capwin/capwin/test/framework/vcsim"
)

// watchFilter labels the objects the running manager reconciles; tests that drive a reconciler
// by hand (restarts) use other values so the manager leaves their objects alone.
const watchFilter = "suite"

var (
	env   *envtest.Environment
	k8s   client.Client
	vcsim *simulator.Server
	model *simulator.Model
	// endpoint restarts vcsim's service (sessions and ended tasks forgotten, inventory kept).
	endpoint *vcsimops.Endpoint
	faults   = &faultInjector{}
	// guestOps runs the guest operations of vcsim's VMs (vcsim's own need Docker).
	guestOps *vcsimops.GuestOps
	calls    = &vcsimops.Calls{}
	ctx      = context.Background()
	// logins counts the logins by user name, refused the ones vcsim refused (wrong password).
	logins, refused = &loginCounter{}, &loginCounter{}
)

// identityNamespace plays the manager's namespace, where cluster identities' Secrets live.
const identityNamespace = "capwin-infrastructure-system"

// vcsimUser is the only identity vcsim accepts.
var vcsimUser = url.UserPassword("capwin", "vc-pw1")

// TestMain runs the production wiring (setup.Reconcilers) against a real kube-apiserver and
// govmomi's vcsim (VPX model). Every test Cluster's workload cluster is that same apiserver.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipping vcsim + envtest suite in -short mode")
		os.Exit(0)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logOutput())))
	// Clones take a little time, as in vCenter, so a test can act while one is in flight.
	// (vcsim names the clone task CloneVm: the CloneVM key delayed nothing.)
	simulator.TaskDelay.MethodDelay = map[string]int{"CloneVm": 300, "LockHandoff": 0}
	model = simulator.VPX()
	if err := model.Create(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	model.Service.TLS = new(tls.Config) // capwin verifies vCenter's certificate
	model.Service.Listen = &url.URL{User: vcsimUser}
	model.Map().SessionManager().ValidLogin = func(req *types.Login) bool {
		logins.add(req.UserName)
		pw, _ := vcsimUser.Password()
		// "capwin+tag" is capwin too: a test tells its logins apart by the tag.
		if user, _, _ := strings.Cut(req.UserName, "+"); user == vcsimUser.Username() && req.Password == pw {
			return true
		}
		refused.add(req.UserName)
		return false
	}
	model.Service.RegisterEndpoints = true // SPBM (storage policies)
	guestOps = vcsimops.Install(model)
	guestOps.Password = guestPassword
	vcsim = model.Service.NewServer()
	endpoint = vcsimops.NewEndpoint(model, vcsim)
	vcsimops.TrustHosts(model, soap.ThumbprintSHA256(vcsim.Certificate()))
	if err := templates.Mark(context.Background(), vcsim.URL, "/DC0/vm/"+templateVM); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var err error
	if env, err = envtest.Start(filepath.Join(envtest.RepoRoot(), "infrastructure", "config", "webhook")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := run(m)
	_ = env.Stop()
	endpoint.Close()
	model.Remove()
	os.Exit(code)
}

func run(m *testing.M) int {
	_, cancel, err := env.StartManager(setup.Scheme(), func(ctx context.Context, mgr ctrl.Manager) error {
		if err := setup.Webhooks(mgr); err != nil {
			return err
		}
		return setup.Reconcilers(ctx, mgr, options(watchFilter, sessions()))
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cancel()
	// The suite reads what it just wrote: through the API server, not the manager's cache.
	if k8s, err = env.Direct(setup.Scheme()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// options are the production options with short polls.
func options(filter string, s *session.Sessions) setup.Options {
	return setup.Options{
		WatchFilterValue: filter, VCenterMachineConcurrency: 4, VCenterClusterConcurrency: 2,
		ClusterCache: manager.ClusterCacheOptions{Concurrency: 4, QPS: 50, Burst: 100},
		PollInterval: 300 * time.Millisecond, TaskPollInterval: 100 * time.Millisecond,
		CredentialRecheck: 200 * time.Millisecond, CreateGrace: 2 * time.Second,
		Sessions:          s,
		IdentityNamespace: identityNamespace,
	}
}

// sessions is a session cache whose calls are counted and may fail on purpose. Its watch waits
// at most a second per call, so vcsim, which keeps a wait going after its client left, closes
// without waiting for it.
func sessions() *session.Sessions {
	return &session.Sessions{WrapTransport: vcsimops.Chain(calls.Wrap, faults.wrap), WatchWait: time.Second}
}

func logOutput() io.Writer {
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		return os.Stderr
	}
	return io.Discard
}

// faultInjector fails chosen vSphere methods a given number of times, loses the answers to
// chosen clones, and records when each clone was sent.
type faultInjector struct {
	mu   sync.Mutex
	left map[string]int
	// lost counts, by VM name, clone answers still to lose; sent lists, by VM name, when each
	// clone was sent.
	lost map[string]int
	sent map[string][]time.Time
	// hid counts, by instance UUID, lookups still to answer with no VM.
	hid map[string]int
}

func (f *faultInjector) fail(method string, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left == nil {
		f.left = map[string]int{}
	}
	f.left[method] = times
}

// lose makes vCenter start the next clones of a VM named name but drops their answers, as a
// connection reset after the request was sent does.
func (f *faultInjector) lose(name string, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lost == nil {
		f.lost = map[string]int{}
	}
	f.lost[name] = times
}

// hide makes the next lookups of a VM by its instance UUID answer that there is none, as a lookup
// made just before its clone ended does.
func (f *faultInjector) hide(uuid string, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hid == nil {
		f.hid = map[string]int{}
	}
	f.hid[uuid] = times
}

// hidden returns how many lookups of uuid are still to be hidden.
func (f *faultInjector) hidden(uuid string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hid[uuid]
}

// clones returns when the clones of a VM named name were sent.
func (f *faultInjector) clones(name string) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.sent[name]...)
}

func (f *faultInjector) wrap(next soap.RoundTripper) soap.RoundTripper {
	return roundTripFunc(func(ctx context.Context, req, res soap.HasFault) error {
		m := session.Method(req)
		f.mu.Lock()
		n := f.left[m]
		if n > 0 {
			f.left[m] = n - 1
		}
		lose := false
		if clone, ok := req.(*methods.CloneVM_TaskBody); ok && n == 0 {
			if f.sent == nil {
				f.sent = map[string][]time.Time{}
			}
			name := clone.Req.Name
			f.sent[name] = append(f.sent[name], time.Now())
			if lose = f.lost[name] > 0; lose {
				f.lost[name]--
			}
		}
		hide := false
		if find, ok := req.(*methods.FindByUuidBody); ok && n == 0 && ptr.Deref(find.Req.InstanceUuid, false) {
			if hide = f.hid[find.Req.Uuid] > 0; hide {
				f.hid[find.Req.Uuid]--
			}
		}
		f.mu.Unlock()
		if hide {
			res.(*methods.FindByUuidBody).Res = &types.FindByUuidResponse{}
			return nil
		}
		if n > 0 {
			return errors.New("injected fault: vCenter did not answer " + m)
		}
		err := next.RoundTrip(ctx, req, res)
		if lose {
			return errors.New("injected fault: connection reset after " + m + " was sent")
		}
		return err
	})
}

// loginCounter counts logins by user name.
type loginCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *loginCounter) add(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[user]++
}

func (c *loginCounter) of(user string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[user]
}

type roundTripFunc func(ctx context.Context, req, res soap.HasFault) error

func (f roundTripFunc) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	return f(ctx, req, res)
}
