package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// dockerArchiveCmd writes, for each OCI archive in -out holding -platform, that platform's image
// as a `docker save` tarball named as the archive says, for Docker engines that cannot load OCI
// archives (before 25.0) - the kind e2e loads the release images into its node that way.
func dockerArchiveCmd(args []string) error {
	fs := flag.NewFlagSet("docker-archive", flag.ExitOnError)
	out := fs.String("out", "out", "folder with the image archives of images build")
	dest := fs.String("dest", "", "folder for the docker tarballs (required)")
	platform := fs.String("platform", "linux/amd64", "the platform to extract")
	_ = fs.Parse(args)
	if *dest == "" {
		return fmt.Errorf("-dest is required")
	}
	want, err := v1.ParsePlatform(*platform)
	if err != nil {
		return err
	}
	archives, err := filepath.Glob(filepath.Join(*out, "*.oci.tar"))
	if err != nil || len(archives) == 0 {
		return fmt.Errorf("no *.oci.tar in %s: run make release first (%v)", *out, err) //nolint:errorlint // shown, not wrapped: err is nil when nothing matched
	}
	for _, a := range archives {
		file, err := dockerArchive(a, *want, *dest)
		if err != nil {
			return err
		}
		if file != "" {
			fmt.Println(file)
		}
	}
	return nil
}

// dockerArchive writes the image of one archive for platform into dest; "" when the archive
// has no image for it.
func dockerArchive(archive string, platform v1.Platform, dest string) (string, error) {
	ref, idx, cleanup, err := readArchive(archive)
	if err != nil {
		return "", err
	}
	defer cleanup()
	m, err := idx.IndexManifest()
	if err != nil {
		return "", err
	}
	for _, d := range m.Manifests {
		if d.Platform == nil || !d.Platform.Satisfies(platform) {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return "", err
		}
		file := filepath.Join(dest, strings.TrimSuffix(filepath.Base(archive), ".oci.tar")+".docker.tar")
		if err := tarball.WriteToFile(file, ref, img); err != nil {
			return "", fmt.Errorf("%s: %w", archive, err)
		}
		return file, nil
	}
	return "", nil
}
