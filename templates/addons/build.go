package addons

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
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
		if r.GetKind() == "Secret" {
			literalStringData(&r.RNode)
		}
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
	return ExplicitIndent(out.Bytes()), nil
}

// literalStringData writes a Secret's values as literal blocks, so that ExplicitIndent can make
// any one-line value (a password with quotes, '#', ': ') reach the Secret as it is.
func literalStringData(secret *yaml.RNode) {
	data, err := secret.Pipe(yaml.Lookup("stringData"))
	if err != nil || data == nil {
		return
	}
	for i := 1; i < len(data.YNode().Content); i += 2 {
		if v := data.YNode().Content[i]; strings.Contains(v.Value, "${") {
			v.Style = yaml.LiteralStyle
		}
	}
}

// variableBlock is a literal block scalar whose only line is one clusterctl variable.
var variableBlock = regexp.MustCompile(`(?m)^( *)([A-Za-z0-9_]+): \|-\n( +)(\$\{[A-Z0-9_]+\})$`)

// ExplicitIndent gives such blocks an indentation indicator (|2-), which the YAML emitter drops:
// then a value that starts with a blank keeps it, and any one-line value (quotes, '#', ': ')
// reaches the object as it is.
func ExplicitIndent(body []byte) []byte {
	return variableBlock.ReplaceAllFunc(body, func(m []byte) []byte {
		g := variableBlock.FindSubmatch(m)
		return []byte(fmt.Sprintf("%s%s: |%d-\n%s%s", g[1], g[2], len(g[3])-len(g[1]), g[3], g[4]))
	})
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
