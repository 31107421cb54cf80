// Package credentials reads the login Secret of a VCenterCluster or HyperVCluster and keeps a
// Secret to the one capwin object it belongs to, so one tenant's password is never sent to a
// server another object names.
package credentials

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/loginsecret"
)

// Holder returns the owner reference of the capwin object a Secret belongs to: the first of its
// owners of a holder kind (owners are appended, so the first is the oldest). nil: none yet.
func Holder(secret client.Object) *metav1.OwnerReference { return loginsecret.Holder(secret) }

// HeldByOther reports whether the Secret belongs to a capwin object other than obj.
func HeldByOther(secret, obj client.Object) bool {
	h := Holder(secret)
	return h != nil && h.UID != obj.GetUID()
}

// CheckHolder returns a terminal CredentialsInUse error when the Secret belongs to a capwin
// object other than obj: its credentials must not be used for obj.
func CheckHolder(secret, obj client.Object) error {
	if !HeldByOther(secret, obj) {
		return nil
	}
	h := Holder(secret)
	return hypervisor.Errorf(infrav1.CredentialsInUseReason,
		"Secret %s/%s belongs to %s %s (uid %s): a credentials Secret serves one cluster; create a Secret of its own for this one, or use a cluster identity",
		secret.GetNamespace(), secret.GetName(), h.Kind, h.Name, h.UID)
}

// CheckLogin returns a terminal SecretNotALogin error when the Secret cannot serve as a login at
// all (its type, or another controller manages it).
func CheckLogin(secret *corev1.Secret) error {
	if p := loginsecret.Problem(secret); p != "" {
		return hypervisor.Errorf(infrav1.SecretNotALoginReason, "%s", p)
	}
	return nil
}
