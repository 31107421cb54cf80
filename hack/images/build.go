package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
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

// buildAll writes every selected image into o.out, then images.txt and checksums.txt.
func buildAll(ctx context.Context, o options) error {
	var images []built
	add := func(image, tag string, buildIndex func(sbomPrefix string) (v1.ImageIndex, error)) error {
		if len(o.only) > 0 && !o.only[image] {
			return nil
		}
		ref, err := name.NewTag(o.registry + "/" + image + ":" + tag)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "images: building %s\n", ref)
		idx, err := buildIndex(filepath.Join(o.out, image+"-"+tag))
		if err != nil {
			return err
		}
		archive := image + "-" + tag + ".oci.tar"
		if err := writeArchive(filepath.Join(o.out, archive), ref, idx, o.created); err != nil {
			return err
		}
		d, err := idx.Digest()
		if err != nil {
			return err
		}
		images = append(images, built{ref, d, archive})
		return nil
	}
	for _, image := range sortedKeys(managers) {
		err := add(image, o.version, func(string) (v1.ImageIndex, error) { return buildManager(ctx, o, image, o.out) })
		if err != nil {
			return err
		}
	}
	err := add("capwin-flanneld-windows", o.version, func(sbom string) (v1.ImageIndex, error) {
		return buildHostProcess(ctx, o, flanneldImage(o.flannelVersion), sbom+".windows-amd64.spdx.json")
	})
	if err != nil {
		return err
	}
	err = add("capwin-node-health", o.version, func(sbom string) (v1.ImageIndex, error) {
		return buildHostProcess(ctx, o, nodeHealthImage(o.root, o.version), sbom+".windows-amd64.spdx.json")
	})
	if err != nil {
		return err
	}
	err = add("capwin-windows-exporter", o.version, func(sbom string) (v1.ImageIndex, error) {
		return buildHostProcess(ctx, o, windowsExporterImage(o.windowsExporterVersion), sbom+".windows-amd64.spdx.json")
	})
	if err != nil {
		return err
	}
	for _, kv := range o.kubernetesVersions {
		err := add("capwin-kube-proxy-windows", kv, func(sbom string) (v1.ImageIndex, error) {
			return buildHostProcess(ctx, o, kubeProxyImage(kv), sbom+".windows-amd64.spdx.json")
		})
		if err != nil {
			return err
		}
	}
	var list strings.Builder
	for _, b := range images {
		fmt.Fprintf(&list, "%s@%s %s\n", b.ref, b.digest, b.archive)
	}
	if err := os.WriteFile(filepath.Join(o.out, "images.txt"), []byte(list.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprint(os.Stderr, list.String())
	return writeChecksums(o.out)
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

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
