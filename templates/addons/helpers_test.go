package addons

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	sigsyaml "sigs.k8s.io/yaml"
)

// required are the values of the variables without default, as a cluster template gets them.
var required = map[string]string{
	"CLUSTER_NAME":              "win1",
	"KUBERNETES_VERSION":        "v1.36.3",
	"CONTROL_PLANE_ENDPOINT_IP": "10.0.0.10",
	"VSPHERE_SERVER":            "vcenter.example.com",
	"VSPHERE_TLS_THUMBPRINT":    "AA:BB:CC",
	"VSPHERE_DATACENTER":        "dc1",
	"VSPHERE_USERNAME":          "capwin@vsphere.local",
	"VSPHERE_PASSWORD":          "0123",
}

// process runs clusterctl's own template processor over text: the required variables, the given
// overrides, and the defaults of the text for everything else.
func process(t *testing.T, text []byte, overrides map[string]string) []byte {
	t.Helper()
	vars := map[string]string{}
	for k, v := range required {
		vars[k] = v
	}
	for k, v := range overrides {
		vars[k] = v
	}
	out, err := yamlprocessor.NewSimpleProcessor().Process(text, func(name string) (string, error) {
		if v, ok := vars[name]; ok {
			return v, nil
		}
		return "", fmt.Errorf("variable %s not set", name)
	})
	if err != nil {
		t.Fatalf("clusterctl processing: %v", err)
	}
	return out
}

// vcenterCalico and vcenterFlannel are the selections of the vCenter flavors.
var (
	vcenterCalico  = Selection{CNI: "calico", Infrastructure: VCenter}
	vcenterFlannel = Selection{CNI: "flannel", Infrastructure: VCenter}
)

// processedManifests is one addon's manifest of a selection after clusterctl.
func processedManifests(t *testing.T, sel Selection, name string, overrides map[string]string) []byte {
	t.Helper()
	m, err := Manifests(sel, name)
	if err != nil {
		t.Fatal(err)
	}
	return process(t, m, overrides)
}

// names are the addon names of a selection.
func names(t *testing.T, sel Selection) []string {
	t.Helper()
	n, err := Names(sel)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), addonsv1.AddToScheme(s)); err != nil {
		panic(err)
	}
	s.AddKnownTypeWithName(serviceMonitorGVK, &serviceMonitor{})
	return s
}()

// strict decodes YAML into registered types and fails on unknown or duplicate fields.
var strict = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

// object is one decoded document: typed when its kind is registered (client-go's scheme and CAPI
// addons), otherwise nil; always available as unstructured.
type object struct {
	typed runtime.Object
	u     *unstructured.Unstructured
}

// documents splits multi-document YAML.
func documents(t *testing.T, text []byte) [][]byte {
	t.Helper()
	var docs [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(text)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("split YAML: %v", err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

// decode decodes every document of text: strictly into its type when the kind is known, as
// unstructured for CRD kinds (e.g. operator.tigera.io Installation).
func decode(t *testing.T, text []byte) []object {
	t.Helper()
	var objs []object
	for _, doc := range documents(t, text) {
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("YAML: %v\n%s", err, doc)
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			t.Fatalf("object without apiVersion, kind or name:\n%s", doc)
		}
		obj := object{u: u}
		typed, _, err := strict.Decode(doc, nil, nil)
		switch {
		case err == nil:
			obj.typed = typed
		case !runtime.IsNotRegisteredError(err):
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// scriptFile returns the embedded file a generated ConfigMap key comes from (configMapGenerator
// keys are file names; every script name is unique in this package).
func scriptFile(t *testing.T, key string) []byte {
	t.Helper()
	var found []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Base(p) == key {
			found = append(found, p)
		}
		return err
	})
	if len(found) != 1 {
		t.Fatalf("script %s: found %v, want exactly one file", key, found)
	}
	b, err := files.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}
