package localpods

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/capwin/capwin/internal/test/envtest"
)

// gcInterval is how often the garbage collector sweeps.
const gcInterval = 2 * time.Second

// Cluster is an empty management cluster (kube-apiserver and etcd, nothing installed) whose
// Deployments run here as processes.
type Cluster struct {
	Env *envtest.Environment
	// Kubeconfig is an admin kubeconfig file of the cluster.
	Kubeconfig string
	Runner     *Runner

	socket string
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// Start starts the cluster with dir for its files and the pods' folders and logs.
func Start(ctx context.Context, dir string, programs map[string]Program, log logr.Logger) (_ *Cluster, retErr error) {
	assets, err := envtest.Assets()
	if err != nil {
		return nil, err
	}
	// A Unix socket's path has at most 107 bytes: it goes in the temporary folder, not in dir.
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	c := &Cluster{socket: filepath.Join(os.TempDir(), "capwin-egress-"+hex.EncodeToString(b)+".sock")}
	defer func() {
		if retErr != nil {
			_ = c.Stop()
		}
	}()
	egress, err := EgressConfig(dir, c.socket)
	if err != nil {
		return nil, err
	}
	env := &ctrlenvtest.Environment{BinaryAssetsDirectory: assets}
	env.ControlPlane.GetAPIServer().Configure().Set("egress-selector-config-file", egress)
	c.Env = &envtest.Environment{Environment: env}
	if c.Env.Config, err = envtest.StartControlPlane(env); err != nil {
		return nil, err
	}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := c.Env.WriteAdminKubeconfig("admin", c.Kubeconfig); err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = appsv1.AddToScheme(scheme)
	cl, err := client.New(c.Env.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	pods := filepath.Join(dir, "pods")
	if err := os.MkdirAll(pods, 0o755); err != nil {
		return nil, err
	}
	c.Runner = New(cl, c.Kubeconfig, pods, programs, log)
	gc, err := NewGarbageCollector(c.Env.Config, log.WithName("garbage-collector"))
	if err != nil {
		return nil, err
	}
	ctx, c.cancel = context.WithCancel(ctx)
	c.done.Add(3)
	go func() {
		defer c.done.Done()
		gc.Run(ctx, gcInterval)
	}()
	go func() {
		defer c.done.Done()
		c.Runner.Run(ctx)
	}()
	go func() {
		defer c.done.Done()
		if err := c.Runner.ServeEgress(ctx, c.socket); err != nil {
			log.Error(err, "egress proxy")
		}
	}()
	return c, nil
}

// Stop stops the processes, the proxy and the API server.
func (c *Cluster) Stop() error {
	if c.cancel != nil {
		c.cancel()
	}
	c.done.Wait()
	_ = os.Remove(c.socket)
	if c.Env != nil && c.Env.Config != nil {
		return c.Env.Stop()
	}
	return nil
}
