package main

import (
	"context"
	"fmt"
	"io/fs"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/config/crd"
)

// validateSchema checks obj as the API server does on create: the CRD's OpenAPI schema, then its
// CEL rules (x-kubernetes-validations). The CRD is the one embedded at build time, found by the
// object's kind and version.
func validateSchema(obj runtime.Object) field.ErrorList {
	gvk := obj.GetObjectKind().GroupVersionKind()
	v, err := validatorFor(gvk.Kind, gvk.Version)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := validation.ValidateCustomResource(nil, content, v.schema)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, content, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// validator is the compiled schema and CEL rules of one kind and version.
type validator struct {
	schema     validation.SchemaValidator
	structural *schema.Structural
	cel        *cel.Validator
}

// validators caches the compiled validators by "kind/version": compiling the CEL rules costs
// far more than checking an object (the fuzz test checks thousands).
var validators sync.Map

func validatorFor(kind, version string) (*validator, error) {
	key := kind + "/" + version
	if v, ok := validators.Load(key); ok {
		return v.(*validator), nil
	}
	props, err := crdSchema(kind, version)
	if err != nil {
		return nil, err
	}
	sv, _, err := validation.NewSchemaValidator(props)
	if err != nil {
		return nil, err
	}
	structural, err := schema.NewStructural(props)
	if err != nil {
		return nil, err
	}
	v := &validator{schema: sv, structural: structural, cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}
	validators.Store(key, v)
	return v, nil
}

// crdSchema returns the internal form of the schema of kind at version from the embedded CRDs.
func crdSchema(kind, version string) (*apiextensionsinternal.JSONSchemaProps, error) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	for _, name := range files {
		raw, err := crd.Bases.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var c apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if c.Spec.Names.Kind != kind {
			continue
		}
		for _, v := range c.Spec.Versions {
			if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			out := &apiextensionsinternal.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, out, nil); err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("no CRD serves kind %s at version %s", kind, version)
}
