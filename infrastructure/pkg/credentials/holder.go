// Package credentials reads the login Secret of a VCenterCluster or HyperVCluster and keeps a
// Secret to the one capwin object it belongs to, so one tenant's password is never sent to a
// server another object names.
package credentials

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// holderKinds are the capwin kinds that take a credentials Secret as their own.
var holderKinds = []string{"VCenterCluster", "HyperVCluster", "VCenterClusterIdentity", "HyperVClusterIdentity"}

// Holder returns the owner reference of the capwin object a Secret belongs to: the first of its
// owners of a holder kind (owners are appended, so the first is the oldest). nil: none yet.
func Holder(secret client.Object) *metav1.OwnerReference {
	for _, ref := range secret.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == infrav1.GroupVersion.Group && slices.Contains(holderKinds, ref.Kind) {
			return &ref
		}
	}
	return nil
}

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
