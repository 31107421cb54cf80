package guest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/guestjoin"
)

// caPath is where kubeadm join stores the CA it discovered.
const caPath = `C:\etc\kubernetes\pki\ca.crt`

// join is Step-Join: write the JoinConfiguration, run kubeadm join, delete the file (it holds
// the token) whatever the outcome.
func (s *script) join(ctx context.Context) error {
	j := s.doc.Join
	if s.g.fs.exists(j.Kubeconfig) {
		s.log("the node has joined already")
		return nil
	}
	s.g.fs.write(j.ConfigPath, []byte(j.Config))
	err := s.kubeadmJoin(ctx)
	s.g.fs.remove(j.ConfigPath)
	if err != nil {
		return &exitError{program: "kubeadm join", cause: err}
	}
	return nil
}

// kubeadmJoin is `kubeadm join --config=<configPath>` on a worker. Its output goes to the
// bootstrap log, indented, as Invoke-Native logs it.
func (s *script) kubeadmJoin(ctx context.Context) error {
	out := func(line string) { s.log("  " + line) }
	phase, err := s.joinPhases(ctx, out)
	if err != nil {
		if ctx.Err() != nil {
			return err // powered off: kubeadm prints nothing more
		}
		err = fmt.Errorf("error execution phase %s: %w", phase, err)
		out(err.Error())
	}
	return err
}

func (s *script) joinPhases(parent context.Context, out func(string)) (phase string, err error) {
	data, _ := s.g.fs.read(s.doc.Join.ConfigPath)
	jc := &upstreamv1beta4.JoinConfiguration{}
	if err := yaml.UnmarshalStrict(data, jc); err != nil {
		return "preflight", fmt.Errorf("reading %s: %w", s.doc.Join.ConfigPath, err)
	}
	bt := jc.Discovery.BootstrapToken
	if bt == nil {
		return "preflight", errors.New("only bootstrap token discovery is simulated")
	}
	flags, err := guestjoin.ParseKubeletFlags(s.kubeletArgs)
	if err != nil {
		return "preflight", err
	}
	name := nodeName(s.g.cfg.Hostname, jc, flags)
	s.g.setNodeName(name)

	ctx, cancel := context.WithTimeout(parent, s.g.cfg.JoinTimeout)
	defer cancel()
	out("[preflight] Running pre-flight checks")
	ca, err := s.discover(ctx, bt, out)
	if err != nil {
		return "preflight", fmt.Errorf("couldn't validate the identity of the API Server: %w", err)
	}
	token := jc.Discovery.TLSBootstrapToken
	if token == "" {
		token = bt.Token
	}
	server, _ := guestjoin.EndpointURL(bt.APIServerEndpoint)
	cs, closeConns, err := s.g.newClient(&rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		return "preflight", err
	}
	defer closeConns()

	out("[preflight] Reading configuration from the cluster...")
	cms := cs.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	kubeadmConfig, err := cms.Get(ctx, "kubeadm-config", metav1.GetOptions{})
	if err != nil {
		return "preflight", fmt.Errorf("unable to fetch the kubeadm-config ConfigMap: %w", err)
	}
	cc := &upstreamv1beta4.ClusterConfiguration{}
	if err := yaml.Unmarshal([]byte(kubeadmConfig.Data["ClusterConfiguration"]), cc); err != nil || cc.KubernetesVersion == "" {
		return "preflight", fmt.Errorf("the kubeadm-config ConfigMap holds no ClusterConfiguration with a kubernetesVersion (%v)", err) //nolint:errorlint // shown, not wrapped: err is nil when the YAML parses but has no kubernetesVersion
	}
	kubeletConfig, err := cms.Get(ctx, "kubelet-config", metav1.GetOptions{})
	if err != nil {
		return "kubelet-start", fmt.Errorf("unable to fetch the kubelet-config ConfigMap: %w", err)
	}
	if kubeletConfig.Data["kubelet"] == "" {
		return "kubelet-start", errors.New("the kubelet-config ConfigMap has no \"kubelet\" key")
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil && isReady(node):
		return "kubelet-start", fmt.Errorf("a Node with name %q and status \"Ready\" already exists in the cluster; delete it or give this node another name", name)
	case err != nil && !apierrors.IsNotFound(err):
		return "kubelet-start", fmt.Errorf("cannot get Node %q: %w", name, err)
	}

	config := []byte(kubeletConfig.Data["kubelet"])
	if jc.Patches != nil && jc.Patches.Directory != "" {
		if config, err = s.patchKubeletConfig(config, jc.Patches.Directory, out); err != nil {
			return "kubelet-start", err
		}
	}
	s.g.fs.write(caPath, ca)
	out(fmt.Sprintf("[kubelet-start] Writing kubelet configuration to file %q", flags.Config))
	s.g.fs.write(flags.Config, config)
	boot, err := bootstrapKubeconfig(server, ca, token)
	if err != nil {
		return "kubelet-start", err
	}
	s.g.fs.write(flags.BootstrapKubeconfig, boot)
	out("[kubelet-start] Starting the kubelet")
	out("[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap")
	if err := s.g.startKubelet(ctx, name, s.doc.KubernetesVersion, flags); err != nil {
		return "kubelet-start", err
	}
	s.g.fs.remove(flags.BootstrapKubeconfig)
	out("This node has joined the cluster")
	return "", nil
}

// nodeName is the name the kubelet registers: --hostname-override, else kubeadm's
// nodeRegistration.name, else the lowercased computer name. The kubelet's wins because it is
// the one in the CSR and the Node.
func nodeName(hostname string, jc *upstreamv1beta4.JoinConfiguration, flags guestjoin.KubeletFlags) string {
	name := strings.ToLower(hostname)
	for _, n := range []string{jc.NodeRegistration.Name, flags.HostnameOverride} {
		if n != "" {
			name = n
		}
	}
	return name
}

// plannedNodeName is nodeName as the user data says it, before any step ran ("" if unreadable).
func plannedNodeName(hostname string, doc *userdata.Document) string {
	jc := &upstreamv1beta4.JoinConfiguration{}
	flags, err := guestjoin.ParseKubeletFlags(doc.Kubelet.Args)
	if yaml.Unmarshal([]byte(doc.Join.Config), jc) != nil || err != nil {
		return ""
	}
	return nodeName(hostname, jc, flags)
}

// bootstrapKubeconfig is kubeadm's bootstrap-kubelet.conf: the discovered CA and the token.
func bootstrapKubeconfig(server string, ca []byte, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubernetes"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["tls-bootstrap-token-user"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["tls-bootstrap-token-user@kubernetes"] = &clientcmdapi.Context{Cluster: "kubernetes", AuthInfo: "tls-bootstrap-token-user"}
	cfg.CurrentContext = "tls-bootstrap-token-user@kubernetes"
	return clientcmd.Write(*cfg)
}

func isReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
