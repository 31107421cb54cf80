package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceIsCurrent fails when docs/reference is not what the CRDs give: run make generate.
func TestReferenceIsCurrent(t *testing.T) {
	for _, b := range books {
		want, err := b.render("../..")
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("../..", b.page))
		if err != nil || string(got) != want {
			t.Errorf("%s is stale (or missing: %v): run make generate", b.page, err)
		}
	}
}

// TestEveryFieldIsListed: each kind has a heading and every spec field of the vCenter machine,
// nested ones included, has a row with its description and limits.
func TestEveryFieldIsListed(t *testing.T) {
	page, err := books[0].render("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n## VCenterMachine\n",
		"\n## HyperVClusterIdentity\n",
		"| `spec.template.spec` | object, required | spec of each VCenterMachine. The fields of [VCenterMachine](#vcentermachine) `spec`.",
		"| `spec.network[].ipAddrs` | []string | ipAddrs are static addresses in CIDR form",
		"Rule: must be an address in CIDR form, e.g. 10.0.0.21/24.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the infrastructure reference lacks %q", want)
		}
	}
}

func TestText(t *testing.T) {
	got := text("a |b|\n  <name> `x<y>`  end")
	if want := "a \\|b\\| &lt;name&gt; `x<y>` end"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
