package main

import (
	"archive/tar"
	"bytes"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// entry is one file, directory or symlink of a layer.
type entry struct {
	name     string // path inside the layer, no leading slash
	mode     int64
	uid, gid int
	dir      bool
	link     string // symlink target
	body     []byte
	pax      map[string]string
}

// layer is an OCI layer of entries in the given order, with fixed times and owners so that the
// same entries give the same digest.
func layer(entries []entry, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: mtime,
			Typeflag: tar.TypeReg, Size: int64(len(e.body)), PAXRecords: e.pax, Format: tar.FormatPAX,
		}
		switch {
		case e.dir:
			h.Typeflag, h.Name, h.Size = tar.TypeDir, e.name+"/", 0
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}
