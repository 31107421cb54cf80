package rbac_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	"github.com/capwin/capwin/internal/release"
	"github.com/capwin/capwin/internal/test/envtest"
)

// components are one provider's release objects, variables at their defaults.
type components struct {
	file string
	objs []unstructured.Unstructured
}

// releaseComponents writes a release (internal/release, what make release-manifests publishes)
// and reads both components files the way clusterctl init does with no variables set.
func releaseComponents(dir string) (map[string]*components, error) {
	if err := release.Write(envtest.RepoRoot(), dir); err != nil {
		return nil, err
	}
	out := map[string]*components{}
	for file := range release.Components {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		processed, err := yamlprocessor.NewSimpleProcessor().Process(raw, func(string) (string, error) {
			return "", errors.New("not set")
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		objs, err := utilyaml.ToUnstructured(processed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out[strings.TrimSuffix(file, "-components.yaml")] = &components{file: file, objs: objs}
	}
	return out, nil
}

func (c *components) ofKind(kind string) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, o := range c.objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// rbacKinds are what the release grants the manager with, applied as they are.
var rbacKinds = []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// applyRBAC creates the namespace and every RBAC object of the components.
func (c *components) applyRBAC(ctx context.Context, admin client.Client) error {
	for _, kind := range rbacKinds {
		for _, o := range c.ofKind(kind) {
			if err := admin.Create(ctx, &o); err != nil {
				return fmt.Errorf("%s: %s %s: %w", c.file, kind, o.GetName(), err)
			}
		}
	}
	return nil
}

// crds are the components' CustomResourceDefinitions.
func (c *components) crds() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, o := range c.ofKind("CustomResourceDefinition") {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, crd); err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	return out, nil
}

// rules are the rules of the components' ClusterRoles and Roles.
func (c *components) rules() ([]rbacv1.PolicyRule, error) {
	var out []rbacv1.PolicyRule
	for _, kind := range []string{"ClusterRole", "Role"} {
		for _, o := range c.ofKind(kind) {
			var r rbacv1.ClusterRole // a Role has the same rules field
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				return nil, err
			}
			out = append(out, r.Rules...)
		}
	}
	return out, nil
}

// managerArgs are the manager container's args and its ServiceAccount.
func (c *components) managerArgs() (args []string, sa identity, err error) {
	deps := c.ofKind("Deployment")
	if len(deps) != 1 {
		return nil, sa, fmt.Errorf("%s: want one Deployment, found %d", c.file, len(deps))
	}
	spec, _, _ := unstructured.NestedMap(deps[0].Object, "spec", "template", "spec")
	sa = identity{Namespace: deps[0].GetNamespace()}
	sa.Name, _, _ = unstructured.NestedString(spec, "serviceAccountName")
	containers, _, _ := unstructured.NestedSlice(spec, "containers")
	if len(containers) == 0 || sa.Name == "" {
		return nil, sa, fmt.Errorf("%s: Deployment without container or serviceAccountName", c.file)
	}
	args, _, err = unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	return args, sa, err
}

// installWebhooks creates the components' webhook configurations with every service reference
// turned into a URL of a manager's webhook server (the apiserver cannot reach a Service here).
func (c *components) installWebhooks(ctx context.Context, admin client.Client, baseURL string, caBundle []byte) error {
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		for _, o := range c.ofKind(kind) {
			w := o.DeepCopy()
			hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
			for _, h := range hooks {
				cc, _ := h.(map[string]any)["clientConfig"].(map[string]any)
				path, found, _ := unstructured.NestedString(cc, "service", "path")
				if !found {
					continue
				}
				delete(cc, "service")
				cc["url"] = baseURL + path
				cc["caBundle"] = base64.StdEncoding.EncodeToString(caBundle)
			}
			if err := unstructured.SetNestedSlice(w.Object, hooks, "webhooks"); err != nil {
				return err
			}
			if err := admin.Create(ctx, w); err != nil {
				return err
			}
		}
	}
	return nil
}
