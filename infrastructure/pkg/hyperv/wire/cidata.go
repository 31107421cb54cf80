package wire

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"

	"github.com/capwin/capwin/internal/guestos"
)

// ConfigDriveLabel is the volume label cloudbase-init's and cloud-init's NoCloud sources (and the
// bootstrap's network step) look for.
const ConfigDriveLabel = guestos.ConfigDriveLabel

// ConfigDrive builds a NoCloud config drive: an ISO 9660 image labelled cidata whose files (at the
// root) carry Joliet names, the only long names Windows reads from a CD.
func ConfigDrive(files map[string][]byte) ([]byte, error) {
	iso, err := configDrive(files)
	if err != nil {
		return nil, fmt.Errorf("build the config drive: %w", err)
	}
	return iso, nil
}

func configDrive(files map[string][]byte) ([]byte, error) {
	dir, err := os.MkdirTemp("", "capwin-cidata-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }() // best effort: the manager's own temp folder
	content := filepath.Join(dir, "content")
	if err := os.Mkdir(content, 0o700); err != nil {
		return nil, err
	}
	for name, data := range files {
		if name != filepath.Base(name) || name == "." || name == ".." {
			return nil, fmt.Errorf("config drive file %q must be a plain name", name)
		}
		if err := os.WriteFile(filepath.Join(content, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	image := filepath.Join(dir, "cidata.iso")
	f, err := os.Create(image) //nolint:gosec // a file in the temp folder made above
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // on the error paths; closed and checked below otherwise
	fs, err := iso9660.Create(file.New(f, false), 0, 0, 2048, content)
	if err != nil {
		return nil, fmt.Errorf("create the ISO 9660 image: %w", err)
	}
	if err := fs.Finalize(iso9660.FinalizeOptions{Joliet: true, RockRidge: true, VolumeIdentifier: ConfigDriveLabel}); err != nil {
		return nil, fmt.Errorf("write the ISO 9660 image: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write the ISO 9660 image: %w", err)
	}
	return os.ReadFile(image) //nolint:gosec // the file written above
}

// ReadConfigDrive returns the root files of a config drive image (the simulated guest, tests).
func ReadConfigDrive(iso []byte) (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "capwin-cidata-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }() // best effort: the manager's own temp folder
	p := filepath.Join(dir, "cidata.iso")
	if err := os.WriteFile(p, iso, 0o600); err != nil {
		return nil, err
	}
	f, err := os.Open(p) //nolint:gosec // the file written above, in the temp folder made above
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	fs, err := iso9660.Read(file.New(f, true), int64(len(iso)), 0, 2048)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(".")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		r, err := fs.OpenFile("/"+e.Name(), os.O_RDONLY)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		out[e.Name()] = data
	}
	return out, nil
}
