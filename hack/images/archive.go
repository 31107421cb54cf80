package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// containerdName is the annotation containerd (ctr import) and docker load read the full
// image name from; org.opencontainers.image.ref.name carries the tag, as the OCI spec has it.
const containerdName = "io.containerd.image.name"

// writeArchive writes idx, named ref, as an OCI image layout in a tar file: what
// `docker buildx build --output type=oci` writes, read by skopeo (oci-archive:), docker load,
// ctr import and, unpacked, crane push --index.
func writeArchive(file string, ref name.Tag, idx v1.ImageIndex, mtime time.Time) error {
	dir, err := os.MkdirTemp("", "capwin-oci")
	if err != nil {
		return err
	}
	defer removeTemp(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		specsv1.AnnotationRefName: ref.TagStr(),
		containerdName:            ref.Name(),
	})); err != nil {
		return err
	}
	return tarDir(file, dir, mtime)
}

// tarDir writes dir's files into a tar file in name order with fixed times and owners.
func tarDir(file, dir string, mtime time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	f, err := os.Create(file) //nolint:gosec // G304: a file in the output folder this build was given
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, p := range names {
		if err := addFile(tw, dir, p, mtime); err != nil {
			_ = f.Close() // the archive is incomplete either way: the write error is the one to report
			return err
		}
	}
	return errors.Join(tw.Close(), f.Close())
}

func addFile(tw *tar.Writer, dir, p string, mtime time.Time) error {
	rel, _ := filepath.Rel(dir, p)
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: mtime, Typeflag: tar.TypeReg, Size: info.Size(), Format: tar.FormatPAX}
	if info.IsDir() {
		h.Name, h.Mode, h.Typeflag, h.Size = h.Name+"/", 0o755, tar.TypeDir, 0
	}
	if err := tw.WriteHeader(h); err != nil || info.IsDir() {
		return err
	}
	in, err := os.Open(p) //nolint:gosec // G304: a file of the layout this build just wrote
	if err != nil {
		return err
	}
	defer closeRead(in)
	_, err = io.Copy(tw, in)
	return err
}

// readArchive reads the image index and its name from an archive of writeArchive. The
// returned cleanup removes the unpacked layout.
func readArchive(file string) (name.Tag, v1.ImageIndex, func(), error) {
	dir, err := os.MkdirTemp("", "capwin-oci")
	if err != nil {
		return name.Tag{}, nil, nil, err
	}
	cleanup := func() { removeTemp(dir) }
	fail := func(err error) (name.Tag, v1.ImageIndex, func(), error) {
		cleanup()
		return name.Tag{}, nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := untar(file, dir); err != nil {
		return fail(err)
	}
	outer, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return fail(err)
	}
	m, err := outer.IndexManifest()
	if err != nil {
		return fail(err)
	}
	if len(m.Manifests) != 1 {
		return fail(fmt.Errorf("%d images, want 1", len(m.Manifests)))
	}
	ref, err := name.NewTag(m.Manifests[0].Annotations[containerdName])
	if err != nil {
		return fail(err)
	}
	idx, err := outer.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return fail(err)
	}
	return ref, idx, cleanup, nil
}

// untar unpacks the regular files and directories of a tar file into dir.
func untar(file, dir string) error {
	f, err := os.Open(file) //nolint:gosec // G304: an archive this program wrote
	if err != nil {
		return err
	}
	defer closeRead(f)
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("%s: path outside the archive", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = writeFrom(p, tr)
		}
		if err != nil {
			return err
		}
	}
}

func writeFrom(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	out, err := os.Create(p) //nolint:gosec // G304: untar checked that p is inside dir
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	return errors.Join(err, out.Close())
}

// removeTemp removes a temporary folder of this program; one left behind (a file still open on
// another platform, a permission changed by a build) is not worth failing the build for.
func removeTemp(dir string) { _ = os.RemoveAll(dir) }

// closeRead closes a file that was only read: its Close cannot lose data.
func closeRead(f *os.File) { _ = f.Close() }
