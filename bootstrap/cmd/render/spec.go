package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// notices receives what render says about its input (which object of a file it used); the
// user data goes to stdout, so this is stderr.
var notices io.Writer = os.Stderr

// document is one YAML document of a file, with what identifies it.
type document struct {
	kind, name string
	raw        []byte
}

// specKind reports whether kind is one the preview renders.
func specKind(kind string) bool { return kind == "WindowsConfig" || kind == "WindowsConfigTemplate" }

// readSpec reads the WindowsConfig or WindowsConfigTemplate of a file: the file's only one, or
// the one called name. A file of several documents (a generated cluster, say) is searched, and
// render says on notices which object it used.
func readSpec(path, name string, notices io.Writer) (runtime.Object, *bootstrapv1.WindowsConfigSpec, error) {
	raw, err := os.ReadFile(path) //nolint:gosec // G304: the file named on this command line
	if err != nil {
		return nil, nil, err
	}
	docs, err := splitDocuments(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	doc, err := pickDocument(docs, name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(docs) > 1 {
		if _, err := fmt.Fprintf(notices, "render: using %s %s of %s\n", doc.kind, doc.name, path); err != nil {
			return nil, nil, err
		}
	}
	obj, spec, err := decodeSpec(doc.raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s %s: %w", path, doc.kind, doc.name, err)
	}
	return obj, spec, nil
}

// splitDocuments splits YAML at its `---` lines; empty documents are dropped.
func splitDocuments(raw []byte) ([]document, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var docs []document
	for {
		b, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		var meta struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal(b, &meta); err != nil {
			return nil, fmt.Errorf("document %d: %w", len(docs)+1, err)
		}
		if len(bytes.TrimSpace(b)) == 0 || (meta.Kind == "" && isComment(b)) {
			continue
		}
		docs = append(docs, document{kind: meta.Kind, name: meta.Metadata.Name, raw: b})
	}
}

// isComment reports whether b holds only comments and blank lines.
func isComment(b []byte) bool {
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// pickDocument chooses the WindowsConfig or WindowsConfigTemplate among docs: the one called
// name, or the only one.
func pickDocument(docs []document, name string) (document, error) {
	var found []document
	var others []string
	for _, d := range docs {
		switch {
		case !specKind(d.kind):
			others = append(others, d.kind)
		case name == "" || d.name == name:
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		var names []string
		for _, d := range found {
			names = append(names, d.kind+" "+d.name)
		}
		return document{}, fmt.Errorf("holds %d WindowsConfigs and WindowsConfigTemplates (%s): choose one with --name", len(found), strings.Join(names, ", "))
	case name != "":
		return document{}, fmt.Errorf("holds no WindowsConfig or WindowsConfigTemplate called %q", name)
	case len(docs) == 1:
		return document{}, fmt.Errorf("kind %q is neither WindowsConfig nor WindowsConfigTemplate", docs[0].kind)
	}
	return document{}, fmt.Errorf("holds no WindowsConfig or WindowsConfigTemplate (kinds: %s)", strings.Join(others, ", "))
}

// decodeSpec decodes YAML of either kind strictly (an unknown field is an error).
func decodeSpec(raw []byte) (runtime.Object, *bootstrapv1.WindowsConfigSpec, error) {
	var meta struct{ Kind string }
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return nil, nil, err
	}
	switch meta.Kind {
	case "WindowsConfig":
		c := &bootstrapv1.WindowsConfig{}
		if err := yaml.UnmarshalStrict(raw, c); err != nil {
			return nil, nil, err
		}
		return c, &c.Spec, nil
	case "WindowsConfigTemplate":
		t := &bootstrapv1.WindowsConfigTemplate{}
		if err := yaml.UnmarshalStrict(raw, t); err != nil {
			return nil, nil, err
		}
		return t, &t.Spec.Template.Spec, nil
	}
	return nil, nil, fmt.Errorf("kind %q is neither WindowsConfig nor WindowsConfigTemplate", meta.Kind)
}
