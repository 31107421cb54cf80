// Command release writes capwin's generated templates (make generate) or a full release
// (make release-manifests, make release): components, metadata.yaml, cluster templates and
// ClusterClasses, with capwin's images in -registry tagged -version.
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
	var s release.Stamp
	flag.StringVar(&s.Registry, "registry", release.DefaultRegistry, "registry of capwin's images in the release files")
	flag.StringVar(&s.Version, "version", release.DefaultVersion, "release version: the tag of capwin's images and a release series of metadata.yaml")
	flag.Parse()
	var err error
	if *out != "" {
		err = release.WriteStamped(*root, *out, s)
	} else {
		err = release.WriteTemplates(*root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}
