package rbac_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capwin/capwin/internal/feature"
	"github.com/capwin/capwin/internal/manager"
)

// identity is a manager's ServiceAccount.
type identity struct{ Namespace, Name string }

// impersonate is admin acting as the ServiceAccount, as the apiserver authenticates a Pod's
// token (user and groups), with every request seen by rec.
func (id identity) impersonate(admin *rest.Config, rec *recorder) *rest.Config {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + id.Namespace + ":" + id.Name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + id.Namespace, "system:authenticated"},
	}
	cfg.Wrap(rec.wrap)
	return cfg
}

// options parses the Deployment's args with the common flags of internal/manager (the provider
// flags are left to the caller), then the test's addresses.
func options(args []string, overrides ...string) (*manager.Options, error) {
	o := manager.NewOptions()
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.ParseErrorsAllowlist.UnknownFlags = true // provider flags and --feature-gates
	return o, fs.Parse(append(args, overrides...))
}

// newManager is manager.New on cfg (the impersonating config) with what one test process needs
// that a Pod has by itself: the leader election namespace (a Pod's comes from its ServiceAccount
// mount) and no controller name validation (both managers run a clustercache controller here).
func newManager(o *manager.Options, scheme *runtime.Scheme, name, namespace string, cfg *rest.Config) (ctrl.Manager, error) {
	return manager.NewForConfig(cfg, o, scheme, name, feature.Gates.Enabled(feature.PriorityQueue), func(opts *ctrl.Options) {
		opts.LeaderElectionNamespace = namespace
		opts.Controller.SkipNameValidation = ptr.To(true)
	})
}

// running is a started manager and where it serves.
type running struct {
	ctrl.Manager
	name        string
	metricsAddr string
	webhookURL  string
	rec         *recorder
	done        chan error
}

// startManager builds and starts one manager from its release Deployment's args, as its main.go
// does (start registers webhooks and reconcilers), and waits until it leads and serves webhooks.
func startManager(ctx context.Context, c *components, admin *rest.Config, name string, scheme *runtime.Scheme, certDir string,
	start func(context.Context, ctrl.Manager, *manager.Options) error) (*running, error) {
	args, sa, err := c.managerArgs()
	if err != nil {
		return nil, err
	}
	metricsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	webhookPort, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &running{name: name, rec: newRecorder(), done: make(chan error, 1),
		metricsAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(metricsPort)),
		webhookURL:  "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(webhookPort))}
	o, err := options(args, "--diagnostics-address="+r.metricsAddr, "--health-addr=0",
		"--webhook-port="+strconv.Itoa(webhookPort), "--webhook-cert-dir="+certDir)
	if err != nil {
		return nil, err
	}
	if !o.LeaderElect || o.Manager.InsecureDiagnostics {
		return nil, fmt.Errorf("%s: the release runs without leader election or with insecure diagnostics: %v", c.file, args)
	}
	if r.Manager, err = newManager(o, scheme, name, sa.Namespace, sa.impersonate(admin, r.rec)); err != nil {
		return nil, err
	}
	if err := start(ctx, r.Manager, o); err != nil {
		return nil, err
	}
	go func() { r.done <- r.Start(ctx) }()
	select {
	case <-r.Elected():
	case err := <-r.done:
		return nil, fmt.Errorf("%s stopped: %w", name, err)
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("%s: not elected leader within a minute; denied: %v", name, r.rec.denials())
	}
	for deadline := time.Now().Add(30 * time.Second); r.GetWebhookServer().StartedChecker()(nil) != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: webhook server not serving", name)
		}
	}
	return r, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
