package management

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// startObserver starts the informers behind Management.Client.
func (m *Management) startObserver(ctx context.Context) (client.Client, error) {
	c, err := cluster.New(m.Env.Config, func(o *cluster.Options) { o.Scheme = Scheme() })
	if err != nil {
		return nil, err
	}
	ctx, m.observer = context.WithCancel(ctx)
	go func() { _ = c.Start(ctx) }()
	if !c.GetCache().WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("harness cache did not sync")
	}
	return c.GetClient(), nil
}

// RestartManager stops the manager — every controller, cache, ClusterCache and the webhook
// server — and starts a new one against the same apiserver, as a restart of the providers' and
// CAPI's pods would. Whatever the controllers knew only in memory is gone.
func (m *Management) RestartManager(ctx context.Context) error {
	m.cancel()
	if cc, ok := m.ClusterCache.(interface{ Shutdown() }); ok {
		cc.Shutdown()
	}
	addr := net.JoinHostPort(m.Env.WebhookInstallOptions.LocalServingHost, strconv.Itoa(m.Env.WebhookInstallOptions.LocalServingPort))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		l, err := net.Listen("tcp", addr) // the old webhook server has let go of its port
		if err == nil {
			_ = l.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("webhook port %s still in use: %w", addr, err)
		}
	}
	mgr, cancel, err := m.Env.StartManager(Scheme(), m.setup, keepManagedFields)
	if err != nil {
		return err
	}
	m.Manager, m.cancel = mgr, cancel
	return nil
}
