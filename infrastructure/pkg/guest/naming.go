package guest

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
	tparse "text/template/parse"
)

// NameData is what a naming template reads: .machine.name, .cluster.name, .namespace and
// .random.
type NameData struct {
	Machine   string
	Cluster   string
	Namespace string
	// UID of the Machine: .random is derived from it (the same on every reconcile).
	UID string
}

// maxNameTries bounds the salts tried for a free name.
const maxNameTries = 32

// namingFuncs are the template's functions, with sprig's argument order (the piped value last).
var namingFuncs = template.FuncMap{
	"lower":      strings.ToLower,
	"trimPrefix": func(prefix, s string) string { return strings.TrimPrefix(s, prefix) },
	"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
	"replace":    replace,
	"trunc":      trunc,
}

// allowedFuncs are the functions a template may call: its own, and the builtins that cannot
// make long output or loop (printf's width can, range can).
var allowedFuncs = map[string]bool{"lower": true, "trimPrefix": true, "trimSuffix": true, "replace": true, "trunc": true,
	"eq": true, "ne": true, "and": true, "or": true, "not": true, "len": true}

// maxReplaced bounds what replace returns: replacing "" in a chain could otherwise grow the
// string tenfold per call.
const maxReplaced = 1024

func replace(old, repl, s string) (string, error) {
	if out := strings.ReplaceAll(s, old, repl); len(out) <= maxReplaced {
		return out, nil
	}
	return "", fmt.Errorf("replace gives more than %d characters", maxReplaced)
}

// trunc keeps the first n characters of s, or with a negative n the last -n.
func trunc(n int, s string) string {
	switch {
	case n >= 0 && n < len(s):
		return s[:n]
	case n < 0 && -n < len(s):
		return s[len(s)+n:]
	}
	return s
}

// ParseNamingTemplate parses a naming template with its functions; a missing key is an error.
// Only text, actions, if and with are allowed, and only the functions of allowedFuncs: a name
// template has no loops, no nested templates and no way to make long output.
func ParseNamingTemplate(text string) (*template.Template, error) {
	t, err := template.New("namingStrategy").Funcs(namingFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	if len(t.Templates()) > 1 {
		return nil, errors.New("define and block are not allowed in a naming template")
	}
	if err := checkNode(t.Root); err != nil {
		return nil, err
	}
	return t, nil
}

// checkBranch checks an if's or a with's pipeline and both lists.
func checkBranch(b *tparse.BranchNode) error {
	return errors.Join(checkNode(b.Pipe), checkNode(b.List), checkNode(b.ElseList))
}

// checkNodes is checkNode of each node.
func checkNodes[N tparse.Node](nodes []N) error {
	for _, n := range nodes {
		if err := checkNode(n); err != nil {
			return err
		}
	}
	return nil
}

// checkNode refuses what a naming template may not hold (see ParseNamingTemplate).
func checkNode(n tparse.Node) error {
	switch n := n.(type) {
	case nil, *tparse.TextNode, *tparse.FieldNode, *tparse.VariableNode, *tparse.DotNode, *tparse.StringNode,
		*tparse.NumberNode, *tparse.BoolNode, *tparse.NilNode:
		return nil
	case *tparse.ListNode:
		if n == nil {
			return nil
		}
		return checkNodes(n.Nodes)
	case *tparse.ActionNode:
		return checkNode(n.Pipe)
	case *tparse.IfNode:
		return checkBranch(&n.BranchNode)
	case *tparse.WithNode:
		return checkBranch(&n.BranchNode)
	case *tparse.PipeNode:
		if n == nil {
			return nil
		}
		return checkNodes(n.Cmds)
	case *tparse.CommandNode:
		return checkNodes(n.Args)
	case *tparse.ChainNode:
		return checkNode(n.Node)
	case *tparse.IdentifierNode:
		if !allowedFuncs[n.Ident] {
			return fmt.Errorf("function %q is not allowed in a naming template (lower, trunc, trimPrefix, trimSuffix, replace, eq, ne, and, or, not, len)", n.Ident)
		}
		return nil
	}
	return fmt.Errorf("%q is not allowed in a naming template: only text, actions, if and with", n.String())
}

// TemplateName renders a naming template into a computer name: the output lowercased, with
// everything but letters, digits and '-' dropped and no '-' at either end. On a name taken in the
// cluster, .random is drawn again (from the UID and a salt); a template whose name does not
// change with .random fails when its name is taken.
func TemplateName(text string, d NameData, taken func(string) bool) (string, error) {
	t, err := ParseNamingTemplate(text)
	if err != nil {
		return "", err
	}
	var last string
	for salt := range maxNameTries {
		name, err := renderName(t, d, salt)
		if err != nil {
			return "", err
		}
		if !taken(name) {
			return name, nil
		}
		if name == last {
			break
		}
		last = name
	}
	return "", fmt.Errorf("the naming template gives %q, which another machine of the cluster has: use .random in the template", last)
}

// renderName is one computer name from the template, checked against Windows' rules.
func renderName(t *template.Template, d NameData, salt int) (string, error) {
	var b strings.Builder
	data := map[string]any{
		"machine":   map[string]string{"name": d.Machine},
		"cluster":   map[string]string{"name": d.Cluster},
		"namespace": d.Namespace,
		"random":    hash(d.UID, salt, 5),
	}
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	name := sanitize(b.String())
	switch {
	case name == "":
		return "", fmt.Errorf("the naming template gives %q, no letter or digit", b.String())
	case len(name) > MaxComputerName:
		return "", fmt.Errorf("the naming template gives %q, %d characters: a Windows computer name has at most %d", name, len(name), MaxComputerName)
	case allDigits(name):
		return "", fmt.Errorf("the naming template gives %q: a Windows computer name cannot be only digits", name)
	}
	return name, nil
}

// CheckNamingTemplate is the admission check of a naming template: it must parse, and give a
// valid computer name for the shortest and the longest names Kubernetes allows, and different
// names to two machines of one MachineDeployment.
func CheckNamingTemplate(text string) error {
	t, err := ParseNamingTemplate(text)
	if err != nil {
		return err
	}
	long := strings.Repeat("m", 241)
	cluster := strings.Repeat("c", 63)
	namespace := strings.Repeat("n", 63)
	for _, pair := range [][2]NameData{
		{{Machine: "w-ab1cd-ef2gh", Cluster: "c", Namespace: "n", UID: "1"}, {Machine: "w-ab1cd-ij3kl", Cluster: "c", Namespace: "n", UID: "2"}},
		{{Machine: long + "-ab1cd-ef2gh", Cluster: cluster, Namespace: namespace, UID: "3"}, {Machine: long + "-ab1cd-ij3kl", Cluster: cluster, Namespace: namespace, UID: "4"}},
	} {
		a, err := renderName(t, pair[0], 0)
		if err != nil {
			return fmt.Errorf("for a Machine %.24s... of cluster %.12s...: %w", pair[0].Machine, pair[0].Cluster, err)
		}
		b, err := renderName(t, pair[1], 0)
		if err != nil {
			return fmt.Errorf("for a Machine %.24s... of cluster %.12s...: %w", pair[1].Machine, pair[1].Cluster, err)
		}
		if a == b {
			return fmt.Errorf("gives two machines of one MachineDeployment the same name %q: use .random or the end of .machine.name", a)
		}
	}
	return nil
}
