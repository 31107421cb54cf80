package workload

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	capwinenvtest "github.com/capwin/capwin/internal/test/envtest"
	"github.com/capwin/capwin/test/framework/nodenet"
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
	// A graceful stop waits for open watches (a management cluster's ClusterCaches may still hold
	// some); a workload cluster of a test need not wait 20s for them.
	api.StopTimeout = 5 * time.Second
	api.CertDir = c.certDir
	api.SecureServing.CA = p.caPEM
	api.SecureServing.Authn = &caAuthn{pki: p}
	args := api.Configure()
	// envtest disables ServiceAccount admission; a real cluster (and ReplicaSet-created Pods) has it.
	args.Disable("disable-admission-plugins")
	args.Set("service-account-key-file", filepath.Join(c.certDir, "sa.pub"))
	args.Set("service-account-signing-key-file", filepath.Join(c.certDir, "sa.key"))
	// What kubeadm init configures and a join relies on: anonymous access (cluster-info is read
	// before the joining node trusts anything), bootstrap tokens as credentials, and the Node
	// authorizer plus NodeRestriction, which confine a kubelet's client certificate to its own
	// Node, Lease and Pods.
	args.Set("anonymous-auth", "true")
	args.Set("enable-bootstrap-token-auth", "true")
	args.Set("authorization-mode", "Node,RBAC")
	args.Set("enable-admission-plugins", "NodeRestriction")
	// The apiserver reaches kubelets (node proxy, Node Log Query) at their InternalIP, as kubeadm
	// configures it, through the simulated node network.
	if c.Nodes, err = nodenet.Start(c.certDir); err != nil {
		return err
	}
	egress := filepath.Join(c.certDir, "egress-selector.yaml")
	if err := os.WriteFile(egress, []byte(c.Nodes.EgressSelectorConfiguration()), 0o600); err != nil {
		return err
	}
	args.Set("egress-selector-config-file", egress)
	args.Set("kubelet-preferred-address-types", "InternalIP,ExternalIP,Hostname")
	policy := filepath.Join(c.certDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	c.AuditLog = filepath.Join(opts.LogDir, "kube-apiserver-audit.log")
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", c.AuditLog)
	cfg, err := capwinenvtest.StartControlPlane(c.env)
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

// auditPolicy records who wrote Nodes, CSRs and Pods (no bodies), so a test can tell that a Node
// was registered with the kubelet's own certificate and a Pod deleted by its kubelet.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete]
  resources:
  - group: ""
    resources: [nodes, pods, pods/eviction]
  - group: certificates.k8s.io
    resources: [certificatesigningrequests, certificatesigningrequests/approval]
- level: None
`
