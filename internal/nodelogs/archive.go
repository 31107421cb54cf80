package nodelogs

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"time"
)

// archive is the gzip-compressed tar the logs are gathered into.
type archive struct {
	gz    *gzip.Writer
	tw    *tar.Writer
	at    time.Time
	names []string
}

func newArchive(w io.Writer, at time.Time) *archive {
	gz := gzip.NewWriter(w)
	return &archive{gz: gz, tw: tar.NewWriter(gz), at: at}
}

// file adds one regular file.
func (a *archive) file(name string, data []byte) error {
	hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: a.at, Typeflag: tar.TypeReg}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := a.tw.Write(data); err != nil {
		return err
	}
	a.names = append(a.names, name)
	return nil
}

func (a *archive) close() error {
	if err := a.tw.Close(); err != nil {
		return err
	}
	return a.gz.Close()
}

// ReadArchive reads an archive Gather wrote: its files' contents by name.
func ReadArchive(r io.Reader) (map[string]string, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", hdr.Name, err)
		}
		out[hdr.Name] = string(data)
	}
}
