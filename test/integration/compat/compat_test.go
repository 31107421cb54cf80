// Package compat keeps docs/compatibility.md in step with what the repository declares:
// metadata.yaml's release series and contracts, the Cluster API version of go.mod, the Kubernetes
// version the release builds for, and the contract labels of the CRDs.
package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/internal/test/repo"
)

// row is one release series of the table.
type row map[string]string

// table reads the table under "## Release series": one row per series, by column name.
func table(t *testing.T) []row { return sectionTable(t, "Release series") }

// sectionTable reads the first table under the heading "## <heading>", by column name.
func sectionTable(t *testing.T, heading string) []row {
	b, err := os.ReadFile(filepath.Join(repo.Root(), "docs", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/compatibility.md: no section ## %s", heading)
	}
	var header []string
	var rows []row
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header == nil {
			header = cells
			continue
		}
		r := row{}
		for i, c := range cells {
			if i < len(header) {
				r[header[i]] = c
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatalf("docs/compatibility.md: the table of ## %s has no rows", heading)
	}
	return rows
}

// metadata reads metadata.yaml's release series as "v<major>.<minor>.x" -> contract.
func metadata(t *testing.T) map[string]string {
	b, err := os.ReadFile(filepath.Join(repo.Root(), "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ReleaseSeries []struct {
			Major, Minor int
			Contract     string
		} `json:"releaseSeries"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range m.ReleaseSeries {
		out[fmt.Sprintf("v%d.%d.x", s.Major, s.Minor)] = s.Contract
	}
	return out
}

// TestTableMatchesMetadata: the table has exactly metadata.yaml's release series, each with its
// contract.
func TestTableMatchesMetadata(t *testing.T) {
	series := metadata(t)
	seen := map[string]bool{}
	for _, r := range table(t) {
		s := r["capwin"]
		seen[s] = true
		contract, ok := series[s]
		switch {
		case !ok:
			t.Errorf("docs/compatibility.md lists %s, metadata.yaml has no such release series", s)
		case r["Cluster API contract"] != contract:
			t.Errorf("docs/compatibility.md: %s has contract %q, metadata.yaml %q", s, r["Cluster API contract"], contract)
		}
	}
	for s := range series {
		if !seen[s] {
			t.Errorf("metadata.yaml has the release series %s, docs/compatibility.md does not list it", s)
		}
	}
}

// TestNewestRowMatchesTheBuild: the newest series names the Cluster API release of go.mod, the
// Kubernetes version the release builds kube-proxy for, and the API version the CRDs give for
// its contract.
func TestNewestRowMatchesTheBuild(t *testing.T) {
	rows := table(t)
	newest := rows[len(rows)-1]
	capi := requiredVersion(t, "sigs.k8s.io/cluster-api")
	minor := regexp.MustCompile(`^v\d+\.\d+`).FindString(capi)
	if !strings.Contains(newest["Cluster API (management)"], minor+".x") || !strings.Contains(newest["Cluster API (management)"], capi) {
		t.Errorf("docs/compatibility.md %s: Cluster API %q, go.mod builds with %s", newest["capwin"], newest["Cluster API (management)"], capi)
	}
	k8s := kubernetesVersion(t)
	for _, col := range []string{"Management cluster Kubernetes", "Workload cluster Kubernetes"} {
		if !strings.Contains(newest[col], "tested: "+k8s) {
			t.Errorf("docs/compatibility.md %s: %s %q does not say tested: %s (the Makefile's KUBERNETES_VERSIONS)", newest["capwin"], col, newest[col], k8s)
		}
	}
	contract := newest["Cluster API contract"]
	crds, _ := filepath.Glob(filepath.Join(repo.Root(), "*", "config", "crd", "bases", "*.yaml"))
	if len(crds) == 0 {
		t.Fatal("no CRDs found")
	}
	for _, f := range crds {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatal(err)
		}
		if got := crd.Metadata.Labels["cluster.x-k8s.io/"+contract]; got != newest["API version"] {
			t.Errorf("%s: label cluster.x-k8s.io/%s is %q, docs/compatibility.md says API version %q", filepath.Base(f), contract, got, newest["API version"])
		}
	}
}

func requiredVersion(t *testing.T, module string) string {
	b, err := os.ReadFile(filepath.Join(repo.Root(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == module {
			return r.Mod.Version
		}
	}
	t.Fatalf("go.mod does not require %s", module)
	return ""
}

// kubernetesVersion is the newest version of the Makefile's KUBERNETES_VERSIONS default.
func kubernetesVersion(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(repo.Root(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KUBERNETES_VERSIONS \?= (.+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Makefile: no KUBERNETES_VERSIONS ?= line")
	}
	versions := strings.Fields(string(m[1]))
	return versions[len(versions)-1]
}
