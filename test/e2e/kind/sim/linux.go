//go:build e2e

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	cloudv1 "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/cloud/api/v1alpha1"
	inmemoryruntime "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/runtime"
	"sigs.k8s.io/cluster-api/util/certs"
	containerutil "sigs.k8s.io/cluster-api/util/container"
	"sigs.k8s.io/cluster-api/util/secret"
)

// Static pods of a kubeadm control plane node, as KubeadmControlPlane finds them (by name
// <component>-<node> in kube-system).
var controlPlaneComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"}

// bootLinux is cloud-init running CABPK's user data on a Linux machine: kubeadm init or join
// leaves a Node and, on a control plane machine, the static pods, an etcd member and the API
// server behind the control plane endpoint. The simulation follows Cluster API's in-memory
// provider (test/infrastructure/docker/.../backends/inmemory), the model KubeadmControlPlane
// is tested against upstream.
func (s *sim) bootLinux(ctx context.Context, w *workload, m *clusterv1.Machine, g *guest, userData []byte) error {
	if err := checkCloudConfig(userData); err != nil {
		return err
	}
	c := s.mem.GetResourceGroup(w.name).GetClient()
	if !g.controlPlane {
		return createNode(ctx, c, linuxNode(g, m.Spec.Version, false))
	}
	if err := createNode(ctx, c, linuxNode(g, m.Spec.Version, true)); err != nil {
		return err
	}
	if err := s.startEtcd(ctx, w, c, g.node); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	if err := s.startAPIServer(ctx, w, c, g.node); err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	for _, component := range []string{"kube-scheduler", "kube-controller-manager"} {
		if err := createIfMissing(ctx, c, staticPod(component, g.node)); err != nil {
			return err
		}
	}
	return s.kubeadmInitObjects(ctx, w, c, m.Spec.Version)
}

// checkCloudConfig makes sure the machine got cloud-init data (CABPK's), as cloud-init would.
func checkCloudConfig(data []byte) error {
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("cloud-init: gzip user data: %w", err)
		}
		if data, err = io.ReadAll(r); err != nil {
			return fmt.Errorf("cloud-init: gzip user data: %w", err)
		}
	}
	if !bytes.Contains(data, []byte("#cloud-config")) {
		return errors.New("cloud-init: the user data is not cloud-config")
	}
	return nil
}

func linuxNode(g *guest, kubeletVersion string, controlPlane bool) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: g.node, Labels: map[string]string{
			corev1.LabelHostname: g.node, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
		}},
		Status: nodeStatus(g, "linux", "Ubuntu 24.04 LTS", kubeletVersion),
	}
	if controlPlane {
		n.Labels["node-role.kubernetes.io/control-plane"] = ""
		n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

// startEtcd adds the node's etcd member: a pod annotated with the member and cluster IDs (the
// in-memory etcd answers KubeadmControlPlane's member list and health calls from them) and a
// serving certificate signed by the cluster's etcd CA.
func (s *sim) startEtcd(ctx context.Context, w *workload, c inmemoryruntime.Client, node string) error {
	name := "etcd-" + node
	pod := staticPod("etcd", node)
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); apierrors.IsNotFound(err) {
		info, err := etcdMembers(ctx, c)
		if err != nil {
			return err
		}
		if info.clusterID == "" {
			info.clusterID = fmt.Sprint(rand.Uint32N(1<<31) + 1)
		}
		memberID := ""
		for memberID == "" || info.members.Has(memberID) {
			memberID = fmt.Sprint(rand.Uint32N(1<<31) + 1)
		}
		pod.Annotations = map[string]string{
			cloudv1.EtcdClusterIDAnnotationName: info.clusterID,
			cloudv1.EtcdMemberIDAnnotationName:  memberID,
		}
		if info.leaderID == "" {
			pod.Annotations[cloudv1.EtcdLeaderFromAnnotationName] = time.Now().Format(time.RFC3339)
		}
		if err := c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	} else if err != nil {
		return err
	}
	if s.mux.HasEtcdMember(w.name, name) {
		return nil
	}
	caCert, caKey, err := s.ca(ctx, w.cluster, secret.EtcdCA)
	if err != nil {
		return err
	}
	return s.mux.AddEtcdMember(w.name, name, caCert, caKey)
}

type etcdInfo struct {
	clusterID, leaderID string
	members             sets.Set[string]
}

// etcdMembers reads the etcd cluster the pods describe (Cluster API's in-memory provider keeps
// it the same way).
func etcdMembers(ctx context.Context, c inmemoryruntime.Client) (etcdInfo, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(metav1.NamespaceSystem),
		client.MatchingLabels{"component": "etcd", "tier": "control-plane"}); err != nil {
		return etcdInfo{}, err
	}
	info := etcdInfo{members: sets.New[string]()}
	var leaderFrom time.Time
	for _, p := range pods.Items {
		if _, removed := p.Annotations[cloudv1.EtcdMemberRemoved]; removed {
			continue
		}
		if info.clusterID == "" {
			info.clusterID = p.Annotations[cloudv1.EtcdClusterIDAnnotationName]
		}
		id := p.Annotations[cloudv1.EtcdMemberIDAnnotationName]
		info.members.Insert(id)
		if t, err := time.Parse(time.RFC3339, p.Annotations[cloudv1.EtcdLeaderFromAnnotationName]); err == nil && t.After(leaderFrom) {
			info.leaderID, leaderFrom = id, t
		}
	}
	return info, nil
}

// startAPIServer adds the node's API server; the first one starts the listener, with a serving
// certificate from the cluster CA for the endpoint host.
func (s *sim) startAPIServer(ctx context.Context, w *workload, c inmemoryruntime.Client, node string) error {
	pod := staticPod("kube-apiserver", node)
	if err := createIfMissing(ctx, c, pod); err != nil {
		return err
	}
	if s.mux.HasAPIServer(w.name, pod.Name) {
		return nil
	}
	caCert, caKey, err := s.ca(ctx, w.cluster, secret.ClusterCA)
	if err != nil {
		return err
	}
	return s.mux.AddAPIServer(w.name, pod.Name, caCert, caKey)
}

// kubeadmInitObjects are what `kubeadm init` leaves in a cluster and the controllers and joins
// of this test read: kubeadm-config, the node-reading RBAC of joining nodes, cluster-info (the
// discovery document), kube-proxy and CoreDNS.
func (s *sim) kubeadmInitObjects(ctx context.Context, w *workload, c inmemoryruntime.Client, version string) error {
	caCert, _, err := s.ca(ctx, w.cluster, secret.ClusterCA)
	if err != nil {
		return err
	}
	discovery := clientcmdapi.NewConfig()
	discovery.Clusters[""] = &clientcmdapi.Cluster{
		Server:                   "https://" + net.JoinHostPort(s.o.endpointHost, fmt.Sprint(w.port)),
		CertificateAuthorityData: certs.EncodeCertPEM(caCert),
	}
	kubeconfig, err := clientcmd.Write(*discovery)
	if err != nil {
		return err
	}
	objs := []client.Object{
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:get-nodes"},
			Rules:      []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes"}}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:get-nodes"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kubeadm:get-nodes"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "system:bootstrappers:kubeadm:default-node-token"}},
		},
		// KubeadmControlPlane takes the cluster as initialized once this exists.
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-config", Namespace: metav1.NamespaceSystem},
			Data:       map[string]string{"ClusterConfiguration": ""},
		},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cluster-info", Namespace: metav1.NamespacePublic},
			Data:       map[string]string{"kubeconfig": string(kubeconfig)},
		},
		&appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: metav1.NamespaceSystem, Labels: map[string]string{"component": "kube-proxy"}},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:" + containerutil.SemverToOCIImageTag(version),
			}}}}},
		},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: metav1.NamespaceSystem},
			Data:       map[string]string{"Corefile": ".:53 {\n    forward . /etc/resolv.conf\n}\n"},
		},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: metav1.NamespaceSystem},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "coredns", Image: "registry.k8s.io/coredns/coredns:v1.12.1",
			}}}}},
		},
	}
	for _, o := range objs {
		if err := createIfMissing(ctx, c, o); err != nil {
			return err
		}
	}
	return nil
}

// stopControlPlane removes what a control plane node ran: its static pods, etcd member and API
// server (the last one closes the endpoint).
func (s *sim) stopControlPlane(ctx context.Context, w *workload, c inmemoryruntime.Client, node string) error {
	for _, component := range controlPlaneComponents {
		if err := c.Delete(ctx, staticPod(component, node)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	if err := s.mux.DeleteEtcdMember(w.name, "etcd-"+node); err != nil {
		return err
	}
	return s.mux.DeleteAPIServer(w.name, "kube-apiserver-"+node)
}

// staticPod is the mirror pod of a control plane component, running and ready.
func staticPod(component, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: metav1.NamespaceSystem,
			Name:      component + "-" + node,
			Labels:    map[string]string{"component": component, "tier": "control-plane"},
		},
		Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}

// ca reads a CA of the cluster (written by KubeadmControlPlane) from the management cluster.
func (s *sim) ca(ctx context.Context, cluster client.ObjectKey, purpose secret.Purpose) (*x509.Certificate, *rsa.PrivateKey, error) {
	sec, err := secret.Get(ctx, s.mgmt, cluster, purpose)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s secret of Cluster %s: %w", purpose, cluster, err)
	}
	cert, err := certs.DecodeCertPEM(sec.Data[secret.TLSCrtDataName])
	if err != nil || cert == nil {
		return nil, nil, fmt.Errorf("%s secret of Cluster %s: invalid certificate (%v)", purpose, cluster, err)
	}
	key, err := certs.DecodePrivateKeyPEM(sec.Data[secret.TLSKeyDataName])
	if err != nil {
		return nil, nil, fmt.Errorf("%s secret of Cluster %s: invalid key: %w", purpose, cluster, err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("%s secret of Cluster %s: the in-memory API server signs with RSA keys only", purpose, cluster)
	}
	return cert, rsaKey, nil
}
