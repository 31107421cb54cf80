// Command release writes capwin's generated templates (make generate) or a full release
// (make release-manifests): components, metadata.yaml, cluster templates and ClusterClasses.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/capwin/capwin/internal/release"
)

func main() {
	root := flag.String("root", ".", "repository root")
	out := flag.String("out", "", "write a release into this directory (default: regenerate templates/ and docs/variables.md)")
	flag.Parse()
	var err error
	if *out != "" {
		err = release.Write(*root, *out)
	} else {
		err = release.WriteTemplates(*root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}
