package addons

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/drone/envsubst/v2/parse"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
)

// allText is every template text this package produces.
func allText(t *testing.T) string {
	t.Helper()
	var all strings.Builder
	for _, sel := range Selections() {
		text, err := ClusterResourceSets(sel)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString("---\n")
		all.Write(text)
	}
	return all.String()
}

// uses lists every variable occurrence with its default ("" = none), nested ones included.
func uses(t *testing.T, text string) map[string][]string {
	t.Helper()
	tree, err := parse.Parse(text)
	if err != nil {
		t.Fatalf("envsubst: %v", err)
	}
	out := map[string][]string{}
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch v := n.(type) {
		case *parse.ListNode:
			for _, c := range v.Nodes {
				walk(c)
			}
		case *parse.FuncNode:
			var def strings.Builder
			for _, a := range v.Args {
				switch w := a.(type) {
				case *parse.FuncNode:
					fmt.Fprintf(&def, "${%s}", w.Param)
					walk(w)
				case *parse.TextNode:
					def.WriteString(w.Value)
				}
			}
			out[v.Param] = append(out[v.Param], def.String())
		}
	}
	walk(tree.Root)
	return out
}

// TestVariables checks the variables: UPPER_SNAKE names, one default per variable, the shared
// defaults of the cluster templates, and no required variable the templates do not already have.
func TestVariables(t *testing.T) {
	g := NewWithT(t)
	snake := regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	for name, defaults := range uses(t, allText(t)) {
		g.Expect(name).To(MatchRegexp(snake.String()))
		g.Expect(slices.Compact(slices.Sorted(slices.Values(defaults)))).To(HaveLen(1), "%s has defaults %q", name, defaults)
	}
	vars, err := yamlprocessor.NewSimpleProcessor().GetVariableMap([]byte(allText(t)))
	g.Expect(err).NotTo(HaveOccurred())
	var req []string
	for name, def := range vars {
		if def == nil {
			req = append(req, name)
		}
	}
	g.Expect(req).To(ConsistOf("CLUSTER_NAME", "CONTROL_PLANE_ENDPOINT_IP", "KUBERNETES_VERSION",
		// the vSphere CSI driver's login (storage addon on vCenter): the flavor's own variables
		"VSPHERE_SERVER", "VSPHERE_TLS_THUMBPRINT", "VSPHERE_DATACENTER", "VSPHERE_USERNAME", "VSPHERE_PASSWORD"))
	g.Expect(vars["POD_CIDR"]).To(HaveValue(Equal("10.244.0.0/16")))
	g.Expect(vars["SERVICE_CIDR"]).To(HaveValue(Equal("10.96.0.0/12")))
}

// readmeTable returns README.md's variable table: name -> default column.
func readmeTable(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([A-Z0-9_]+)` \\| ([^|]*) \\|")
	table := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			table[m[1]] = strings.TrimSpace(m[2])
		}
	}
	return table
}

// TestREADMEVariables checks that README.md lists exactly the variables used, with their defaults.
func TestREADMEVariables(t *testing.T) {
	g := NewWithT(t)
	table := readmeTable(t)
	used := uses(t, allText(t))
	g.Expect(slices.Sorted(maps.Keys(table))).To(Equal(slices.Sorted(maps.Keys(used))))
	for name, defaults := range used {
		switch def := defaults[0]; def {
		case "":
			g.Expect(table[name]).To(HavePrefix("(required"), name)
		default:
			g.Expect(table[name]).To(Equal("`"+def+"`"), name)
		}
	}
}

// TestDollarSigns checks that the YAML has no stray "$": outside a variable, dollar signs come in
// pairs (clusterctl turns "$$" into "$"), literal ConfigMap data included.
func TestDollarSigns(t *testing.T) {
	runs := regexp.MustCompile(`\$+`)
	for _, sel := range Selections() {
		for _, name := range names(t, sel) {
			m, err := Manifests(sel, name)
			NewWithT(t).Expect(err).NotTo(HaveOccurred())
			text := string(m)
			for _, loc := range runs.FindAllStringIndex(text, -1) {
				odd := (loc[1]-loc[0])%2 == 1
				if odd && !strings.HasPrefix(text[loc[1]:], "{") {
					t.Errorf("%s: unescaped $ in %q", name, text[max(0, loc[0]-20):min(len(text), loc[1]+20)])
				}
			}
		}
	}
}
