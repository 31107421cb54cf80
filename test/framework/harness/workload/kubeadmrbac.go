package workload

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// BootstrapTokenGroup is the extra group of kubeadm's (and capwin's) join tokens; kubeadm's RBAC
// below grants it what a join needs.
const BootstrapTokenGroup = "system:bootstrappers:kubeadm:default-node-token"

const nodesGroup = "system:nodes"

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

// createJoinRBAC creates the Roles and bindings kubeadm init creates for joining nodes, under
// kubeadm's names, so a join is authorised exactly as in a kubeadm cluster.
func createJoinRBAC(ctx context.Context, cs kubernetes.Interface) error {
	// Namespaced read access to one ConfigMap each.
	readers := []struct {
		ns, name, configMap string
		subjects            []rbacv1.Subject
	}{
		{metav1.NamespacePublic, "kubeadm:bootstrap-signer-clusterinfo", ClusterInfoConfigMap,
			[]rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:anonymous"}}},
		{metav1.NamespaceSystem, "kubeadm:nodes-kubeadm-config", KubeadmConfigConfigMap,
			[]rbacv1.Subject{group(BootstrapTokenGroup), group(nodesGroup)}},
		{metav1.NamespaceSystem, "kubeadm:kubelet-config", KubeletConfigConfigMap,
			[]rbacv1.Subject{group(BootstrapTokenGroup), group(nodesGroup)}},
	}
	for _, r := range readers {
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.ns},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{r.configMap}, Verbs: []string{"get"},
			}},
		}
		if _, err := cs.RbacV1().Roles(r.ns).Create(ctx, role, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("kubeadm init: Role %s: %w", r.name, err)
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.name},
			Subjects:   r.subjects,
		}
		if _, err := cs.RbacV1().RoleBindings(r.ns).Create(ctx, binding, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("kubeadm init: RoleBinding %s: %w", r.name, err)
		}
	}

	// kubeadm join checks that no Ready Node of the same name exists.
	getNodes := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:get-nodes"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, getNodes, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("kubeadm init: ClusterRole kubeadm:get-nodes: %w", err)
	}
	bindings := []struct{ name, clusterRole, group string }{
		// Bootstrap tokens may create CSRs, and the controller-manager approves a token's
		// node-client CSR and a node's renewal of its own client certificate.
		{"kubeadm:kubelet-bootstrap", "system:node-bootstrapper", BootstrapTokenGroup},
		{"kubeadm:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", BootstrapTokenGroup},
		{"kubeadm:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", nodesGroup},
		{"kubeadm:get-nodes", "kubeadm:get-nodes", BootstrapTokenGroup},
	}
	for _, b := range bindings {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: b.name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.clusterRole},
			Subjects:   []rbacv1.Subject{group(b.group)},
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("kubeadm init: ClusterRoleBinding %s: %w", b.name, err)
		}
	}
	return nil
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
