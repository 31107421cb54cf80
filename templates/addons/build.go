package addons

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// build runs kustomize on one embedded directory and escapes the literal ConfigMaps.
func build(dir string) ([]byte, error) {
	mem, err := memFS()
	if err != nil {
		return nil, err
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, "/"+dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	for _, r := range res.Resources() {
		quoteVariables(r.YNode())
		if r.GetKind() != "ConfigMap" || r.GetAnnotations()[LiteralDataAnnotation] != "true" {
			continue
		}
		data := r.GetDataMap()
		for k, v := range data {
			data[k] = Escape(v)
		}
		r.SetDataMap(data)
	}
	// Rendered from the YAML nodes, not with ResMap.AsYaml (a JSON round trip): that keeps the
	// field order and comments of the sources and the quotes set above.
	var out bytes.Buffer
	for i, r := range res.Resources() {
		s, err := r.RNode.String()
		if err != nil {
			return nil, fmt.Errorf("kustomize %s: %w", dir, err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.WriteString(s)
	}
	return out.Bytes(), nil
}

// quoteVariables double-quotes every one-line scalar holding a clusterctl variable. kustomize
// drops the quotes of the source files, and an unquoted substitution could turn a string field
// into a number or a boolean (e.g. a version "1.30").
func quoteVariables(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") && !strings.Contains(n.Value, "\n") {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		quoteVariables(c)
	}
}

// Escape writes every "$" of s as "$$", which clusterctl's envsubst turns back into "$".
func Escape(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// memFS copies the embedded addon directories into an in-memory file system for kustomize, so
// the package works from any working directory.
func memFS() (filesys.FileSystem, error) {
	mem := filesys.MakeFsInMemory()
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join("/", p), b)
	})
	return mem, err
}
