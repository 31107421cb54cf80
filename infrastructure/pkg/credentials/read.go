package credentials

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// Identities and namespaces are read from the manager's cache; Secrets from Secrets (NewCache),
// else live (manager.ClientOptions).
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=vcenterclusteridentities;hypervclusteridentities,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch

// Reader reads the login a cluster names and checks that the cluster may use it.
type Reader struct {
	Client client.Client
	// Secrets reads the login Secrets (NewCache); nil reads them through Client.
	Secrets client.Reader
	// Namespace is the manager's own namespace, where the Secrets of cluster identities live.
	Namespace string
}

// Ref is a cluster's reference to its login: a Secret in its namespace (Kind "" or Secret) or a
// cluster identity.
type Ref struct{ Kind, Name string }

// Lent checks, before anything is sent, that a cluster identity lends its login for what the
// cluster asks (the server or host it names); it returns a terminal *hypervisor.Error when not.
type Lent func(identity client.Object) error

// Secret returns the Secret of ref for the cluster obj: a Secret in obj's namespace that no other
// capwin object holds, or the Secret of a cluster identity whose allowedNamespaces select obj's
// namespace and that lends its login for what obj asks (lent). What the user must change
// (CredentialsInUse, NamespaceNotAllowed, EndpointNotLent) is a terminal *hypervisor.Error; a
// missing Secret or identity is a plain error naming it.
func (r Reader) Secret(ctx context.Context, obj client.Object, ref Ref, lent Lent) (*corev1.Secret, error) {
	if ref.Kind == "" || ref.Kind == infrav1.SecretKind {
		return r.held(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, obj)
	}
	id, spec, err := r.identity(ctx, ref)
	if err != nil {
		return nil, err
	}
	ok, err := r.allowed(ctx, spec.AllowedNamespaces, obj.GetNamespace())
	if err != nil {
		return nil, fmt.Errorf("check that %s %s allows namespace %s: %w", ref.Kind, ref.Name, obj.GetNamespace(), err)
	}
	if !ok {
		return nil, hypervisor.Errorf(infrav1.NamespaceNotAllowedReason,
			"%s %s does not allow namespace %s (its spec.allowedNamespaces): ask the platform team to allow it",
			ref.Kind, ref.Name, obj.GetNamespace())
	}
	if err := lent(id); err != nil {
		return nil, err
	}
	secret, err := r.held(ctx, client.ObjectKey{Namespace: r.Namespace, Name: spec.SecretName}, id)
	if err != nil {
		return nil, fmt.Errorf("Secret of %s %s: %w", ref.Kind, ref.Name, err)
	}
	return secret, nil
}

// held reads a Secret that holder may use: none other holds it.
func (r Reader) held(ctx context.Context, key client.ObjectKey, holder client.Object) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	var from client.Reader = r.Client
	if r.Secrets != nil {
		from = r.Secrets
	}
	if err := from.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("read login Secret %s: %w", key, err)
	}
	if err := CheckHolder(secret, holder); err != nil {
		return nil, err
	}
	if err := CheckLogin(secret); err != nil {
		return nil, err
	}
	return secret, nil
}

// identity reads a cluster identity of either kind.
func (r Reader) identity(ctx context.Context, ref Ref) (client.Object, *infrav1.ClusterIdentitySpec, error) {
	var obj client.Object
	var spec *infrav1.ClusterIdentitySpec
	switch ref.Kind {
	case infrav1.VCenterClusterIdentityKind:
		id := &infrav1.VCenterClusterIdentity{}
		obj, spec = id, &id.Spec.ClusterIdentitySpec
	case infrav1.HyperVClusterIdentityKind:
		id := &infrav1.HyperVClusterIdentity{}
		obj, spec = id, &id.Spec.ClusterIdentitySpec
	default:
		return nil, nil, hypervisor.Errorf(infrav1.InvalidSpecReason, "a login reference cannot name kind %q", ref.Kind)
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: ref.Name}, obj); err != nil {
		return nil, nil, fmt.Errorf("read %s %s: %w", ref.Kind, ref.Name, err)
	}
	return obj, spec, nil
}

// allowed reports whether a namespace is in the list or has labels the selector matches.
func (r Reader) allowed(ctx context.Context, a infrav1.AllowedNamespaces, namespace string) (bool, error) {
	if slices.Contains(a.List, namespace) {
		return true, nil
	}
	if a.Selector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(a.Selector)
	if err != nil {
		return false, hypervisor.Errorf(infrav1.InvalidSpecReason, "spec.allowedNamespaces.selector: %v", err)
	}
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, fmt.Errorf("read namespace %s: %w", namespace, err)
	}
	return sel.Matches(labels.Set(ns.Labels)), nil
}
