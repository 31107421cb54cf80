package workload

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
	"sigs.k8s.io/yaml"
)

// Names of the ConfigMaps kubeadm init publishes and `kubeadm join` reads.
const (
	ClusterInfoConfigMap   = "cluster-info"   // kube-public, key "kubeconfig"; signed per token by KCM
	KubeadmConfigConfigMap = "kubeadm-config" // kube-system, key "ClusterConfiguration"
	KubeletConfigConfigMap = "kubelet-config" // kube-system, key "kubelet"
)

// The workload cluster's service range (envtest's default) and its DNS Service IP.
const (
	serviceSubnet = "10.0.0.0/24"
	clusterDNS    = "10.0.0.10"
)

// kubeletConfiguration is the part of kubelet.config.k8s.io/v1beta1 KubeletConfiguration that
// kubeadm init writes into kubelet-config (the simulated join and kubelet read it with k8s.io/kubelet).
type kubeletConfiguration struct {
	APIVersion     string   `json:"apiVersion"`
	Kind           string   `json:"kind"`
	Authentication kubeAuth `json:"authentication"`
	Authorization  struct {
		Mode string `json:"mode"`
	} `json:"authorization"`
	CgroupDriver       string   `json:"cgroupDriver"`
	ClusterDNS         []string `json:"clusterDNS"`
	ClusterDomain      string   `json:"clusterDomain"`
	RotateCertificates bool     `json:"rotateCertificates"`
	StaticPodPath      string   `json:"staticPodPath"`
}

type kubeAuth struct {
	Anonymous struct {
		Enabled bool `json:"enabled"`
	} `json:"anonymous"`
	Webhook struct {
		Enabled bool `json:"enabled"`
	} `json:"webhook"`
	X509 struct {
		ClientCAFile string `json:"clientCAFile"`
	} `json:"x509"`
}

// InitKubeadm creates what `kubeadm init` leaves behind for joining nodes: the unsigned
// cluster-info ConfigMap (the controller-manager's bootstrap signer adds a JWS per signing
// token), kubeadm-config and kubelet-config, and the RBAC of kubeadm's bootstrap-token phase.
// It is idempotent; Start calls it.
func (c *Cluster) InitKubeadm(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	version, err := cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("kubeadm init: server version: %w", err)
	}
	maps, err := c.kubeadmConfigMaps(version.GitVersion)
	if err != nil {
		return err
	}
	for _, cm := range maps {
		if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("kubeadm init: ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
	}
	return createJoinRBAC(ctx, cs)
}

func (c *Cluster) kubeadmConfigMaps(version string) ([]*corev1.ConfigMap, error) {
	// No credentials: anyone may read it; a joining node trusts it only once the signature of
	// its bootstrap token and its CA pin match.
	info := clientcmdapi.NewConfig()
	info.Clusters[""] = &clientcmdapi.Cluster{Server: "https://" + c.Endpoint, CertificateAuthorityData: c.CACert}
	infoData, err := clientcmd.Write(*info)
	if err != nil {
		return nil, err
	}
	cc := upstreamv1beta4.ClusterConfiguration{
		KubernetesVersion:    version,
		ControlPlaneEndpoint: c.Endpoint,
		ClusterName:          "kubernetes",
		CertificatesDir:      "/etc/kubernetes/pki",
		Networking:           upstreamv1beta4.Networking{ServiceSubnet: serviceSubnet, DNSDomain: "cluster.local"},
	}
	cc.APIVersion, cc.Kind = upstreamv1beta4.GroupVersion.String(), "ClusterConfiguration"
	ccData, err := yaml.Marshal(&cc)
	if err != nil {
		return nil, err
	}
	kc := kubeletConfiguration{
		APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration",
		CgroupDriver: "systemd", ClusterDNS: []string{clusterDNS}, ClusterDomain: "cluster.local",
		RotateCertificates: true, StaticPodPath: "/etc/kubernetes/manifests",
	}
	kc.Authentication.Webhook.Enabled = true
	kc.Authentication.X509.ClientCAFile = "/etc/kubernetes/pki/ca.crt"
	kc.Authorization.Mode = "Webhook"
	kcData, err := yaml.Marshal(&kc)
	if err != nil {
		return nil, err
	}
	cm := func(ns, name, key string, data []byte) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data:       map[string]string{key: string(data)},
		}
	}
	return []*corev1.ConfigMap{
		cm(metav1.NamespacePublic, ClusterInfoConfigMap, "kubeconfig", infoData),
		cm(metav1.NamespaceSystem, KubeadmConfigConfigMap, "ClusterConfiguration", ccData),
		cm(metav1.NamespaceSystem, KubeletConfigConfigMap, "kubelet", kcData),
	}, nil
}
