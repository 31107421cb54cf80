// Command crdref writes the field reference of capwin's API (docs/reference/*.md) from the
// CRDs that make generate writes, so the reference says what the API server validates and
// nothing else: each kind's fields with their type, description and validation.
//
//	go run ./hack/crdref            regenerate docs/reference (make generate runs it)
//	go test ./hack/crdref           fails when docs/reference is stale
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// books are the reference pages and the CRD folders each is written from.
var books = []book{
	{page: "docs/reference/infrastructure.md", crds: "infrastructure/config/crd/bases",
		title: "Field reference: infrastructure provider `capwin`",
		intro: "The kinds of the infrastructure provider: the vCenter and Hyper-V clusters, machines, their templates and the cluster identities. " +
			"How to use them, by task: [vCenter](../vcenter/README.md), [Hyper-V](../hyperv/README.md), [identities](../identities.md)."},
	{page: "docs/reference/bootstrap.md", crds: "bootstrap/config/crd/bases",
		title: "Field reference: bootstrap provider `windows`",
		intro: "The kinds of the bootstrap provider. How to use them, by task: [the bootstrap provider](../bootstrap.md), " +
			"[private registries](../registries.md), [kubelet flags and configuration](../kubelet.md)."},
}

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	for _, b := range books {
		text, err := b.render(*root)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(filepath.Join(*root, b.page)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(*root, b.page), []byte(text), 0o644) //nolint:gosec // G306: a doc page, world-readable like the rest of the checkout
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "crdref:", err)
			os.Exit(1)
		}
	}
}
