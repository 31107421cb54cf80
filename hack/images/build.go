package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// built is one image written to the output folder.
type built struct {
	ref     name.Tag
	digest  v1.Hash
	archive string
}

// imageSet is the images one command writes into o.out, listed at the end in images.txt.
type imageSet struct {
	o      options
	images []built
}

// add builds one image (unless o.only leaves it out) and writes its archive; buildIndex gets the
// prefix of its SBOM files.
func (s *imageSet) add(image, tag string, buildIndex func(sbomPrefix string) (v1.ImageIndex, error)) error {
	if len(s.o.only) > 0 && !s.o.only[image] {
		return nil
	}
	ref, err := name.NewTag(s.o.registry + "/" + image + ":" + tag)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "images: building %s\n", ref)
	idx, err := buildIndex(filepath.Join(s.o.out, image+"-"+tag))
	if err != nil {
		return err
	}
	archive := image + "-" + tag + ".oci.tar"
	if err := writeArchive(filepath.Join(s.o.out, archive), ref, idx, s.o.created); err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	s.images = append(s.images, built{ref, d, archive})
	return nil
}

// finish writes images.txt (reference@digest and archive of each image) and checksums.txt.
func (s *imageSet) finish() error {
	var list strings.Builder
	for _, b := range s.images {
		fmt.Fprintf(&list, "%s@%s %s\n", b.ref, b.digest, b.archive)
	}
	if err := os.WriteFile(filepath.Join(s.o.out, "images.txt"), []byte(list.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprint(os.Stderr, list.String())
	return writeChecksums(s.o.out)
}

// buildAll writes every selected image into o.out, then images.txt and checksums.txt.
func buildAll(ctx context.Context, o options) error {
	set := &imageSet{o: o}
	for _, image := range sortedKeys(managers) {
		err := set.add(image, o.version, func(string) (v1.ImageIndex, error) { return buildManager(ctx, o, image, o.out) })
		if err != nil {
			return err
		}
	}
	hostProcess := []struct {
		image, tag string
		h          hostProcessImage
	}{
		{"capwin-flanneld-windows", o.version, flanneldImage(o.flannelVersion)},
		{"capwin-node-health", o.version, nodeHealthImage(o.root, o.version)},
		{"capwin-windows-exporter", o.version, windowsExporterImage(o.windowsExporterVersion)},
	}
	for _, kv := range o.kubernetesVersions {
		hostProcess = append(hostProcess, struct {
			image, tag string
			h          hostProcessImage
		}{"capwin-kube-proxy-windows", kv, kubeProxyImage(kv)})
	}
	for _, hp := range hostProcess {
		err := set.add(hp.image, hp.tag, func(sbom string) (v1.ImageIndex, error) {
			return buildHostProcess(ctx, o, hp.h, sbom+".windows-amd64.spdx.json")
		})
		if err != nil {
			return err
		}
	}
	return set.finish()
}

// writeChecksums writes checksums.txt: the sha256 of every other file in dir, as sha256sum
// prints them (check with `sha256sum -c checksums.txt` in dir).
func writeChecksums(dir string) error {
	files, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var out strings.Builder
	for _, f := range files {
		if f.IsDir() || f.Name() == "checksums.txt" {
			continue
		}
		sum, err := sha256File(filepath.Join(dir, f.Name()))
		if err != nil {
			return err
		}
		fmt.Fprintf(&out, "%s  %s\n", sum, f.Name())
	}
	return os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(out.String()), 0o644)
}

func sha256File(p string) (string, error) {
	f, err := os.Open(p) //nolint:gosec // G304: an archive this build wrote
	if err != nil {
		return "", err
	}
	defer closeRead(f)
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sortedKeys are the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
