// Package images_test checks the Windows node image recipe (images/packer) as far as this machine
// can without Packer's plugins, Windows or a hypervisor: the Packer templates against the
// builders' and provisioners' own HCL2 schemas (kept as data in images/packer/schemas, with the
// plugin versions plugins.pkr.hcl asks for), cloudbase-init's configuration against its option
// definitions (images/packer/cloudbase-init), the answer file against Windows' unattend
// reference, and the provisioning scripts with the PowerShell parser.
package images_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/capwin/capwin/internal/test/repo"
)

var dir = filepath.Join(repo.Root(), "images", "packer")

// schema is one component's HCL2 spec: attribute types and nested blocks.
type schema struct {
	Source     string             `json:"source"`
	Attributes map[string]string  `json:"attributes"`
	Blocks     map[string]*schema `json:"blocks"`
}

func readSchema(t *testing.T, component string) *schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "schemas", component+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", component, err)
	}
	return &s
}

// recipe is the parsed templates.
type recipe struct {
	files map[string]*hclsyntax.Body
	vars  map[string]string // declared variables and their type expressions
}

func parseRecipe(t *testing.T) *recipe {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.pkr.hcl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no templates in %s: %v", dir, err)
	}
	p := hclparse.NewParser()
	r := &recipe{files: map[string]*hclsyntax.Body{}, vars: map[string]string{}}
	for _, path := range paths {
		f, diags := p.ParseHCLFile(path)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", path, diags)
		}
		body := f.Body.(*hclsyntax.Body)
		r.files[filepath.Base(path)] = body
		for _, b := range body.Blocks {
			if b.Type == "variable" {
				typ := ""
				if a, ok := b.Body.Attributes["type"]; ok {
					typ = string(a.Expr.Range().SliceBytes(f.Bytes))
				}
				r.vars[b.Labels[0]] = typ
			}
		}
	}
	return r
}

// metaArguments are Packer's own arguments of a provisioner block, not the provisioner's.
var metaArguments = []string{"only", "except", "pause_before", "max_retries", "timeout", "override"}

// TestPackerTemplatesMatchSchemas: every attribute and block of each source and provisioner is
// one its plugin defines, with a value of the schema's kind where the template says it plainly.
func TestPackerTemplatesMatchSchemas(t *testing.T) {
	r := parseRecipe(t)
	schemas := map[string]*schema{}
	get := func(c string) *schema {
		if schemas[c] == nil {
			schemas[c] = readSchema(t, c)
		}
		return schemas[c]
	}
	sources, provisioners := 0, 0
	for name, body := range r.files {
		for _, b := range body.Blocks {
			switch b.Type {
			case "source":
				sources++
				r.check(t, name+": source "+b.Labels[0], b.Body, get(b.Labels[0]), nil)
			case "build":
				for _, p := range b.Body.Blocks {
					if p.Type == "provisioner" {
						provisioners++
						r.check(t, name+": provisioner "+p.Labels[0], p.Body, get(p.Labels[0]), metaArguments)
					}
				}
			}
		}
	}
	if sources != 2 || provisioners == 0 {
		t.Errorf("found %d sources and %d provisioners; want vsphere-iso and hyperv-iso, and provisioners", sources, provisioners)
	}
}

func (r *recipe) check(t *testing.T, where string, body *hclsyntax.Body, s *schema, extra []string) {
	t.Helper()
	for name, a := range body.Attributes {
		want, ok := s.Attributes[name]
		if !ok {
			if !slices.Contains(extra, name) {
				t.Errorf("%s: %s is not an attribute of %s", where, name, s.Source)
			}
			continue
		}
		if got := r.kind(a.Expr); got != "" && !strings.HasPrefix(want, got) {
			t.Errorf("%s: %s is a %s, the schema wants %s", where, name, got, want)
		}
	}
	for _, b := range body.Blocks {
		name, inner := b.Type, b.Body
		if b.Type == "dynamic" {
			name = b.Labels[0]
			for _, c := range b.Body.Blocks {
				if c.Type == "content" {
					inner = c.Body
				}
			}
		}
		nested, ok := s.Blocks[name]
		if !ok {
			t.Errorf("%s: %s is not a block of %s", where, name, s.Source)
			continue
		}
		nested.Source = s.Source
		r.check(t, where+" "+name, inner, nested, nil)
	}
}

// kind is what an expression plainly is: string, number, bool, list or map ("" when it depends).
func (r *recipe) kind(e hclsyntax.Expression) string {
	switch e := e.(type) {
	case *hclsyntax.TemplateExpr, *hclsyntax.TemplateWrapExpr:
		return "string"
	case *hclsyntax.LiteralValueExpr:
		return strings.ToLower(e.Val.Type().FriendlyName())
	case *hclsyntax.TupleConsExpr:
		return "list"
	case *hclsyntax.ObjectConsExpr:
		return "map"
	case *hclsyntax.ScopeTraversalExpr:
		if e.Traversal.RootName() == "var" && len(e.Traversal) == 2 {
			if typ, ok := r.vars[e.Traversal[1].(hcl.TraverseAttr).Name]; ok {
				return map[string]string{"string": "string", "number": "number", "bool": "bool", "list(string)": "list", "map(string)": "map"}[typ]
			}
		}
	}
	return ""
}

// TestPackerVariablesAndFiles: every var. and local. a template reads is declared, every declared
// variable is read, and every file under path.root a template names exists.
func TestPackerVariablesAndFiles(t *testing.T) {
	r := parseRecipe(t)
	locals := map[string]bool{}
	for _, body := range r.files {
		for _, b := range body.Blocks {
			if b.Type == "locals" {
				for name := range b.Body.Attributes {
					locals[name] = true
				}
			}
		}
	}
	used := map[string]bool{}
	for name, body := range r.files {
		_ = hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
			e, ok := n.(*hclsyntax.ScopeTraversalExpr)
			if !ok || len(e.Traversal) < 2 {
				return nil
			}
			attr, ok := e.Traversal[1].(hcl.TraverseAttr)
			if !ok {
				return nil
			}
			switch e.Traversal.RootName() {
			case "var":
				used[attr.Name] = true
				if _, ok := r.vars[attr.Name]; !ok {
					t.Errorf("%s: var.%s is not declared", name, attr.Name)
				}
			case "local":
				if !locals[attr.Name] {
					t.Errorf("%s: local.%s is not declared", name, attr.Name)
				}
			}
			return nil
		})
	}
	for v := range r.vars {
		if !used[v] {
			t.Errorf("variable %s is declared but not used", v)
		}
	}
	files := regexp.MustCompile(`\$\{path\.root\}/([^"]+)"`)
	for name := range r.files {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range files.FindAllStringSubmatch(string(src), -1) {
			for _, hv := range []string{"vsphere", "hyperv"} {
				path := strings.ReplaceAll(m[1], "${local.hypervisor[source.type]}", hv)
				if _, err := os.Stat(filepath.Join(dir, path)); err != nil {
					t.Errorf("%s names %s: %v", name, path, err)
				}
			}
		}
	}
}

// TestExampleVariables: the example variables file sets only declared variables, with values of
// their types, and every variable without a default is in it (admin_password and
// vsphere_password come from the environment, as the file says).
func TestExampleVariables(t *testing.T) {
	r := parseRecipe(t)
	f, diags := hclparse.NewParser().ParseHCLFile(filepath.Join(dir, "example.pkrvars.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	attrs := f.Body.(*hclsyntax.Body).Attributes
	for name, a := range attrs {
		typ, ok := r.vars[name]
		if !ok {
			t.Errorf("example.pkrvars.hcl sets %s, which no template declares", name)
			continue
		}
		if got := r.kind(a.Expr); got != "" && !strings.HasPrefix(typ, got) {
			t.Errorf("example.pkrvars.hcl: %s is a %s, declared %s", name, got, typ)
		}
	}
	for _, body := range r.files {
		for _, b := range body.Blocks {
			if b.Type != "variable" {
				continue
			}
			if _, hasDefault := b.Body.Attributes["default"]; !hasDefault && attrs[b.Labels[0]] == nil && b.Labels[0] != "admin_password" {
				t.Errorf("example.pkrvars.hcl lacks %s, which has no default", b.Labels[0])
			}
		}
	}
}
