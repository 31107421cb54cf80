package workload

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// startControlPlane runs etcd and kube-apiserver through envtest, serving with our CA and keys.
func (c *Cluster) startControlPlane(opts Options, p *pki) error {
	logFile := func(name string) (*os.File, error) { return os.Create(filepath.Join(opts.LogDir, name+".log")) }
	etcdLog, err := logFile("etcd")
	if err != nil {
		return err
	}
	c.logs = append(c.logs, etcdLog)
	apiLog, err := logFile("kube-apiserver")
	if err != nil {
		return err
	}
	c.logs = append(c.logs, apiLog)
	etcdPath, err := withDeathSignal(c.certDir, filepath.Join(opts.Binaries, "etcd"))
	if err != nil {
		return err
	}
	apiPath, err := withDeathSignal(c.certDir, filepath.Join(opts.Binaries, "kube-apiserver"))
	if err != nil {
		return err
	}
	c.env = &envtest.Environment{BinaryAssetsDirectory: opts.Binaries}
	c.env.ControlPlane.Etcd = &envtest.Etcd{Path: etcdPath, Out: etcdLog, Err: etcdLog}
	api := c.env.ControlPlane.GetAPIServer()
	api.Path = apiPath
	api.Out, api.Err = apiLog, apiLog
	api.CertDir = c.certDir
	api.SecureServing.CA = p.caPEM
	api.SecureServing.Authn = &caAuthn{pki: p}
	args := api.Configure()
	// envtest disables ServiceAccount admission; a real cluster (and ReplicaSet-created Pods) has it.
	args.Disable("disable-admission-plugins")
	args.Set("service-account-key-file", filepath.Join(c.certDir, "sa.pub"))
	args.Set("service-account-signing-key-file", filepath.Join(c.certDir, "sa.key"))
	cfg, err := c.env.Start()
	if err != nil {
		return fmt.Errorf("start kube-apiserver and etcd: %w", err)
	}
	c.Config, c.KubeConfig = cfg, c.env.KubeConfig
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return err
	}
	c.Endpoint = u.Host
	return nil
}
