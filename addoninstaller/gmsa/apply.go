package gmsa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	return s
}

// objects decodes a multi-document YAML file; documents with only comments are skipped.
func objects(text []byte) ([]*unstructured.Unstructured, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(text), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := d.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// apply server-side applies every object of text, in order. The upstream template gives a
// ClusterRoleBinding a namespace; a cluster-scoped object is applied without one.
func apply(ctx context.Context, c client.Client, text []byte) error {
	objs, err := objects(text)
	if err != nil {
		return permanentError{err}
	}
	for _, u := range objs {
		namespaced, err := c.IsObjectNamespaced(u)
		if err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if !namespaced {
			u.SetNamespace("")
		}
		err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// established says whether the CRD serves its API.
func established(ctx context.Context, c client.Reader) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: CRDName}, crd); err != nil {
		return err
	}
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return nil
		}
	}
	return errors.New("not established yet")
}

// available says whether the webhook's Deployment has rolled out, as kubectl rollout status does.
func available(ctx context.Context, c client.Reader) error {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: Name}, d); err != nil {
		return err
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	if s.ObservedGeneration < d.Generation || s.UpdatedReplicas < want || s.AvailableReplicas < want {
		return fmt.Errorf("%d of %d replicas updated and available", min(s.UpdatedReplicas, s.AvailableReplicas), want)
	}
	return nil
}

func dropBinding(ctx context.Context, c client.Client) error {
	b := &rbacv1.ClusterRoleBinding{}
	b.Name = InstallBinding
	if err := c.Delete(ctx, b); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
