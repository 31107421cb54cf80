// Package loginsecret tells the Secrets capwin holds as hypervisor logins (a VCenterCluster's,
// a HyperVCluster's, a cluster identity's) from the others, so that a Secret is taken as a login
// only if it is one, and a login is never handed to a guest or a node for another use.
package loginsecret

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Label marks the Secrets a capwin object holds as its login (the manager caches only those).
const Label = "infrastructure.cluster.x-k8s.io/credentials"

// group is the API group of the kinds that hold logins.
const group = "infrastructure.cluster.x-k8s.io"

// holderKinds are the capwin kinds that take a login Secret as their own.
var holderKinds = []string{"VCenterCluster", "HyperVCluster", "VCenterClusterIdentity", "HyperVClusterIdentity"}

// Holder returns the owner reference of the capwin object a Secret belongs to: the first of its
// owners of a holder kind (owners are appended, so the first is the oldest). nil: none yet.
func Holder(secret client.Object) *metav1.OwnerReference {
	for _, ref := range secret.GetOwnerReferences() {
		if isHolder(ref) {
			return &ref
		}
	}
	return nil
}

func isHolder(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == group && slices.Contains(holderKinds, ref.Kind)
}

// Problem says why a Secret cannot serve as a hypervisor login ("" when it can): it must be of
// type Opaque or kubernetes.io/basic-auth, and no other controller may manage it. A TLS key, a
// service account token or a registry's docker config named by mistake is never taken over
// (and then deleted with the cluster that took it).
func Problem(secret *corev1.Secret) string {
	switch secret.Type {
	case "", corev1.SecretTypeOpaque, corev1.SecretTypeBasicAuth:
	default:
		return fmt.Sprintf("Secret %s/%s is of type %s, not a login (type Opaque or %s with the keys username and password)",
			secret.Namespace, secret.Name, secret.Type, corev1.SecretTypeBasicAuth)
	}
	for _, ref := range secret.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && !isHolder(ref) {
			return fmt.Sprintf("Secret %s/%s is managed by %s %s, not a login of its own: capwin does not take over another controller's Secret",
				secret.Namespace, secret.Name, ref.Kind, ref.Name)
		}
	}
	return ""
}

// Held reports whether capwin holds the Secret as a hypervisor login: a capwin object owns it or
// it carries the Label.
func Held(secret client.Object) bool {
	_, labelled := secret.GetLabels()[Label]
	return labelled || Holder(secret) != nil
}

// ForOtherUse returns an error when a Secret a tenant names for use (registry credentials, a
// file, guest credentials) is a hypervisor login capwin holds: its password would reach a node or
// a guest.
func ForOtherUse(secret client.Object, use string) error {
	if !Held(secret) {
		return nil
	}
	holder := "a cluster or cluster identity"
	if h := Holder(secret); h != nil {
		holder = h.Kind + " " + h.Name
	}
	return fmt.Errorf("the Secret %s/%s is the hypervisor login of %s: it cannot serve as %s; create a Secret of its own for that",
		secret.GetNamespace(), secret.GetName(), holder, use)
}
