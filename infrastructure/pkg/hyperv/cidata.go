package hyperv

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// ConfigDriveLabel is the volume label cloudbase-init's and cloud-init's NoCloud sources look for.
const ConfigDriveLabel = "cidata"

// ConfigDrive builds a NoCloud config drive: an ISO 9660 image labelled cidata whose files (at the
// root) carry Joliet names, the only long names Windows reads from a CD.
func ConfigDrive(files map[string][]byte) ([]byte, error) {
	dir, err := os.MkdirTemp("", "capwin-cidata-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
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
	f, err := os.Create(image)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fs, err := iso9660.Create(file.New(f, false), 0, 0, 2048, content)
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	if err := fs.Finalize(iso9660.FinalizeOptions{Joliet: true, RockRidge: true, VolumeIdentifier: ConfigDriveLabel}); err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	return os.ReadFile(image)
}
