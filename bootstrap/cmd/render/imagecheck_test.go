package main

import (
	"bytes"
	"flag"
	"io"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/bootstrap/pkg/imagecheck"
)

// TestImageCheckHelp: `render image-check -h` prints its own usage and exits 0; a missing CLUSTER
// or --machine-template is an error. No cluster is needed (test/e2e's TestImageCheck runs the
// check itself on both providers).
func TestImageCheckHelp(t *testing.T) {
	for _, args := range [][]string{{"image-check", "-h"}, {"image-check", "win1", "--help"}} {
		g := NewWithT(t)
		var out bytes.Buffer
		err := run(args, &out)
		g.Expect(err).To(MatchError(flag.ErrHelp), "%q", args)
		g.Expect(exitStatus(err, io.Discard)).To(Equal(0))
		g.Expect(out.String()).To(HavePrefix("usage: render image-check "))
		for _, f := range []string{"-machine-template string", "-image string", "-kubernetes-version string", "-timeout duration"} {
			g.Expect(out.String()).To(ContainSubstring(f))
		}
	}
	g := NewWithT(t)
	var out bytes.Buffer
	g.Expect(run([]string{"image-check", "--machine-template", "t"}, &out)).To(MatchError(ContainSubstring("usage: render image-check")))
	g.Expect(run([]string{"image-check", "win1"}, &out)).To(MatchError(ContainSubstring("usage: render image-check")))
	g.Expect(out.String()).To(BeEmpty())
}

// An image that lacks something prints what it has and what it lacks, and is an error (exit 1).
func TestWriteImageCheck(t *testing.T) {
	g := NewWithT(t)
	res := &imagecheck.Result{Machine: "win1-image-check-abc123", Kind: "VCenterMachine", Image: "windows-2025",
		Message: "lacks: the Windows feature Containers", Inventory: [][2]string{{"windows", "26100"}, {"feature-containers", "Available"}}}
	var out bytes.Buffer
	g.Expect(writeImageCheck(&out, res)).To(MatchError(errImageLacks))
	g.Expect(out.String()).To(ContainSubstring("VCenterMachine win1-image-check-abc123 (image windows-2025), deleted again"))
	g.Expect(out.String()).To(MatchRegexp(`feature-containers\s+Available`))
	g.Expect(out.String()).To(ContainSubstring("lacks: the Windows feature Containers"))
	res.Succeeded, res.Message = true, "the image has what a capwin node needs"
	g.Expect(writeImageCheck(io.Discard, res)).To(Succeed())
}
