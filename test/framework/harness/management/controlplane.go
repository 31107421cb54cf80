package management

import (
	"context"
	"fmt"
	"net"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/predicates"
)

// ControlPlaneGVK is the test-only control plane kind (see the package comment).
var ControlPlaneGVK = schema.GroupVersionKind{Group: "controlplane.harness.capwin.io", Version: "v1alpha1", Kind: "TestControlPlane"}

// NewControlPlane returns a TestControlPlane to create; it reports itself initialized once
// spec.controlPlaneEndpoint is set (SetControlPlaneEndpoint).
func NewControlPlane(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetGroupVersionKind(ControlPlaneGVK)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// ControlPlaneRef is a Cluster's spec.controlPlaneRef to the TestControlPlane name.
func ControlPlaneRef(name string) clusterv1.ContractVersionedObjectReference {
	return clusterv1.ContractVersionedObjectReference{APIGroup: ControlPlaneGVK.Group, Kind: ControlPlaneGVK.Kind, Name: name}
}

// SetControlPlaneEndpoint sets a TestControlPlane's spec.controlPlaneEndpoint to host:port.
func (m *Management) SetControlPlaneEndpoint(ctx context.Context, key client.ObjectKey, hostPort string) error {
	host, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		return err
	}
	port, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return err
	}
	u := NewControlPlane(key.Namespace, key.Name)
	if err := m.Client.Get(ctx, key, u); err != nil {
		return err
	}
	before := u.DeepCopy()
	if err := unstructured.SetNestedMap(u.Object, map[string]any{"host": host, "port": port}, "spec", "controlPlaneEndpoint"); err != nil {
		return err
	}
	return m.Client.Patch(ctx, u, client.MergeFrom(before))
}

// installControlPlaneCRD installs TestControlPlane with the label that declares it implements
// CAPI's v1beta2 control plane contract in version v1alpha1.
func installControlPlaneCRD(cfg *rest.Config) error {
	open := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "testcontrolplanes." + ControlPlaneGVK.Group,
			Labels: map[string]string{clusterv1.GroupVersion.String(): ControlPlaneGVK.Version},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: ControlPlaneGVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: ControlPlaneGVK.Kind, ListKind: ControlPlaneGVK.Kind + "List", Plural: "testcontrolplanes", Singular: "testcontrolplane",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: ControlPlaneGVK.Version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": open, "status": open},
				}},
			}},
		},
	}
	_, err := crenvtest.InstallCRDs(cfg, crenvtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}})
	return err
}

// controlPlaneReconciler is the TestControlPlane provider: initialized once an endpoint is set.
type controlPlaneReconciler struct{ client client.Client }

func setupControlPlane(ctx context.Context, mgr ctrl.Manager, watchFilter string) error {
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "testcontrolplane")
	return ctrl.NewControllerManagedBy(mgr).
		For(NewControlPlane("", "")).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, watchFilter)).
		Complete(&controlPlaneReconciler{client: mgr.GetClient()})
}

func (r *controlPlaneReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := NewControlPlane(req.Namespace, req.Name)
	if err := r.client.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	host, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneEndpoint", "host")
	port, _, _ := unstructured.NestedInt64(u.Object, "spec", "controlPlaneEndpoint", "port")
	initialized := host != "" && port > 0
	was, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "controlPlaneInitialized")
	external, _, _ := unstructured.NestedBool(u.Object, "status", "externalManagedControlPlane")
	if was == initialized && external {
		return ctrl.Result{}, nil
	}
	if err := unstructured.SetNestedField(u.Object, initialized, "status", "initialization", "controlPlaneInitialized"); err != nil {
		return ctrl.Result{}, err
	}
	// The control plane has no Machines (like a managed one): CAPI's Machine controller only
	// drains and deletes a worker's Node when the Cluster has control plane Machines or its
	// control plane says it is externally managed.
	if err := unstructured.SetNestedField(u.Object, true, "status", "externalManagedControlPlane"); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.client.Status().Update(ctx, u); err != nil {
		return ctrl.Result{}, fmt.Errorf("report TestControlPlane initialized=%t: %w", initialized, err)
	}
	return ctrl.Result{}, nil
}
