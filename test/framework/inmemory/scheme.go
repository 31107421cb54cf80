// Package inmemory holds what capwin's tests share about Cluster API's in-memory provider.
package inmemory

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cloudv1 "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/cloud/api/v1alpha1"
)

// Scheme is the workload clusters' API: the kinds the in-memory provider's API server serves
// (as CAPD's main registers them).
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{cloudv1.AddToScheme, corev1.AddToScheme, appsv1.AddToScheme,
		rbacv1.AddToScheme, storagev1.AddToScheme, apiextensionsv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
