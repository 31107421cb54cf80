// Package workload runs a real Kubernetes workload cluster on this machine without Docker:
// kube-apiserver + etcd (controller-runtime's envtest) plus the real kube-scheduler and
// kube-controller-manager as child processes, so Deployments, ReplicaSets, scheduling,
// PodDisruptionBudgets and evictions behave as Kubernetes' own. It is configured as `kubeadm init`
// leaves a cluster (bootstrap tokens, Node authorizer, cluster-info, join RBAC; see kubeadm.go),
// so a simulated node (test/framework/harness/guest) can join it with the real protocol. Without such a
// node, tests create Nodes and write Node/Pod status themselves.
package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	capwinenvtest "github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/childproc"
	"github.com/capwin/capwin/test/framework/nodenet"
)

// Options configures Start.
type Options struct {
	// LogDir receives etcd.log, kube-apiserver.log, kube-scheduler.log and
	// kube-controller-manager.log. Default: a new temporary directory (kept after Stop).
	LogDir string
	// Binaries holds kube-apiserver, etcd, kube-scheduler and kube-controller-manager.
	// Default: internal/test/envtest Assets() (scripts/envtest-assets.sh --workload builds them all).
	Binaries string
}

// Cluster is a running workload cluster.
type Cluster struct {
	Config     *rest.Config // admin (system:masters)
	KubeConfig []byte       // admin kubeconfig, for CAPI's <cluster>-kubeconfig Secret ("value")
	CACert     []byte       // cluster CA PEM: serves the apiserver and signs client certs (<cluster>-ca tls.crt)
	CAKey      []byte       // the CA's PKCS#1 RSA key PEM (<cluster>-ca tls.key)
	Endpoint   string       // host:port of the apiserver
	LogDir     string
	AuditLog   string        // the apiserver's audit log: who wrote Nodes, Pods and CSRs (JSON lines)
	StartTime  time.Duration // how long Start took
	// Nodes is the network the apiserver reaches the simulated kubelets on (their InternalIP:10250).
	Nodes *nodenet.Network

	env      *envtest.Environment
	certDir  string
	logs     []*os.File // etcd's and kube-apiserver's
	children []*childproc.Child
	stopOnce sync.Once
	stopErr  error
}

// Start brings up etcd, kube-apiserver, kube-controller-manager and kube-scheduler and returns
// once the controller-manager has published the default ServiceAccount and kube-root-ca.crt, the
// scheduler has acted on a probe Pod and kubeadm init's objects exist. The processes also end when ctx ends.
func Start(ctx context.Context, opts Options) (_ *Cluster, retErr error) {
	begin := time.Now()
	if opts.Binaries == "" {
		dir, err := capwinenvtest.Assets()
		if err != nil {
			return nil, err
		}
		opts.Binaries = dir
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(opts.Binaries, b)); err != nil {
			return nil, fmt.Errorf("%s missing in %s (run scripts/envtest-assets.sh --workload): %w", b, opts.Binaries, err)
		}
	}
	if opts.LogDir == "" {
		dir, err := os.MkdirTemp("", "capwin-workload-logs-")
		if err != nil {
			return nil, err
		}
		opts.LogDir = dir
	} else if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, err
	}
	certDir, err := os.MkdirTemp("", "capwin-workload-pki-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{LogDir: opts.LogDir, certDir: certDir}
	defer func() {
		if retErr != nil {
			_ = c.Stop()
		}
	}()

	p, err := newPKI()
	if err != nil {
		return nil, err
	}
	if err := p.writeFiles(certDir); err != nil {
		return nil, err
	}
	c.CACert, c.CAKey = p.caPEM, p.keyPEM
	if err := c.startControlPlane(opts, p); err != nil {
		return nil, err
	}
	kubeconfig := func(name string) (string, error) {
		user, err := c.env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
		if err != nil {
			return "", err
		}
		data, err := user.KubeConfig()
		if err != nil {
			return "", err
		}
		path := filepath.Join(certDir, name+".kubeconfig")
		return path, os.WriteFile(path, data, 0o600)
	}
	kcmConfig, err := kubeconfig("system:kube-controller-manager")
	if err != nil {
		return nil, err
	}
	schedConfig, err := kubeconfig("system:kube-scheduler")
	if err != nil {
		return nil, err
	}
	kcm, err := childproc.Start(ctx, "kube-controller-manager", filepath.Join(opts.Binaries, "kube-controller-manager"),
		opts.LogDir, controllerManagerArgs(kcmConfig, certDir)...)
	if err != nil {
		return nil, err
	}
	c.children = append(c.children, kcm)
	sched, err := childproc.Start(ctx, "kube-scheduler", filepath.Join(opts.Binaries, "kube-scheduler"),
		opts.LogDir, schedulerArgs(schedConfig)...)
	if err != nil {
		return nil, err
	}
	c.children = append(c.children, sched)
	context.AfterFunc(ctx, func() { _ = c.Stop() })

	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	if err := c.InitKubeadm(ctx); err != nil {
		return nil, err
	}
	c.StartTime = time.Since(begin)
	return c, nil
}

// Stop stops the scheduler, the controller-manager, kube-apiserver and etcd. It is idempotent.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		for i := len(c.children) - 1; i >= 0; i-- {
			errs = append(errs, c.children[i].Stop())
		}
		if c.env != nil {
			errs = append(errs, c.env.Stop())
		}
		if c.Nodes != nil {
			errs = append(errs, c.Nodes.Close())
		}
		for _, f := range c.logs {
			errs = append(errs, f.Close())
		}
		errs = append(errs, os.RemoveAll(c.certDir))
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}
