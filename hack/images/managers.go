package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/ko/pkg/build"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// managers are capwin's Linux Go images by image name: the Go package ko builds into each. The
// two managers, and the addon installer the workload-cluster addons' Jobs run (gMSA).
var managers = map[string]string{ //nolint:gosec // G101: image names and Go packages, no credentials
	"capwin-addon-installer":   "github.com/capwin/capwin/addoninstaller",
	"capwin-bootstrap-windows": "github.com/capwin/capwin/bootstrap",
	"capwin-infrastructure":    "github.com/capwin/capwin/infrastructure",
}

// buildManager builds one manager image for every platform with ko, on managerBase, and
// writes ko's SPDX SBOMs into sbomDir as <image>-<tag>.<os>-<arch>.spdx.json (and .index.).
func buildManager(ctx context.Context, o options, image string, sbomDir string) (v1.ImageIndex, error) {
	pkg := managers[image]
	binary := path.Base(pkg)
	base, err := managerBase(binary, o.platforms, o.created)
	if err != nil {
		return nil, err
	}
	baseRef, err := name.ParseReference("capwin.local/static-nonroot:" + o.version)
	if err != nil {
		return nil, err
	}
	koSBOM, err := os.MkdirTemp("", "capwin-sbom")
	if err != nil {
		return nil, err
	}
	defer removeTemp(koSBOM)
	var platforms []string
	for _, p := range o.platforms {
		platforms = append(platforms, p.String())
	}
	b, err := build.NewGo(ctx, o.root,
		build.WithPlatforms(platforms...),
		build.WithBaseImages(func(context.Context, string) (name.Reference, build.Result, error) { return baseRef, base, nil }),
		build.WithCreationTime(v1.Time{Time: o.created}),
		build.WithKoDataCreationTime(v1.Time{Time: o.created}),
		build.WithDefaultEnv([]string{"CGO_ENABLED=0", "GOWORK=off"}),
		build.WithDefaultLdflags([]string{"-s", "-w"}),
		build.WithTrimpath(true),
		build.WithUser(fmt.Sprintf("%d:%d", nonroot, nonroot)),
		build.WithSPDX(o.version),
		build.WithSBOMDir(koSBOM),
		build.WithAnnotation(specsv1.AnnotationVersion, o.version),
		build.WithAnnotation(specsv1.AnnotationTitle, image),
		build.WithLabel(specsv1.AnnotationVersion, o.version),
	)
	if err != nil {
		return nil, err
	}
	res, err := b.Build(ctx, build.StrictScheme+pkg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", image, err)
	}
	// ko builds an index for several platforms and an image for one.
	idx, ok := res.(v1.ImageIndex)
	if img, isImage := res.(v1.Image); !ok && isImage {
		idx, err = index(img)
	} else if !ok {
		err = fmt.Errorf("%s: ko built %T", image, res)
	}
	if err != nil {
		return nil, err
	}
	return idx, renameSBOMs(koSBOM, sbomDir, binary, image+"-"+o.version)
}

// renameSBOMs moves ko's SBOM files (<binary>-<platform>.spdx.json) to dst as <prefix>.<platform>.spdx.json.
func renameSBOMs(src, dst, binary, prefix string) error {
	files, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, f := range files {
		rest := strings.TrimPrefix(f.Name(), binary+"-")
		b, err := os.ReadFile(filepath.Join(src, f.Name())) //nolint:gosec // G304: an SBOM that ko wrote into this build's temporary folder
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, prefix+"."+rest), b, 0o644); err != nil { //nolint:gosec // G703: into the output folder this build was given
			return err
		}
	}
	return nil
}
