package guest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// cloudConfigPart is what cloudbase-init's cloud-config plugin reads of the #cloud-config part
// (ntp changes nothing this simulation can show).
type cloudConfigPart struct {
	SetTimezone string `json:"set_timezone"`
	Timezone    string `json:"timezone"`
	WriteFiles  []struct {
		Path     string `json:"path"`
		Encoding string `json:"encoding"`
		Content  string `json:"content"`
		Append   bool   `json:"append"`
	} `json:"write_files"`
	Users []struct {
		Name              string   `json:"name"`
		SSHAuthorizedKeys []string `json:"ssh_authorized_keys"`
	} `json:"users"`
}

// cloudConfig applies the #cloud-config part as cloudbase-init does before running the script
// part, again after every reboot.
func (s *script) cloudConfig() error {
	if s.unpacked.CloudConfig == nil {
		return nil
	}
	var cc cloudConfigPart
	if err := yaml.Unmarshal(s.unpacked.CloudConfig, &cc); err != nil {
		return fmt.Errorf("cloud-config: %w", err)
	}
	for _, zone := range []string{cc.SetTimezone, cc.Timezone} {
		if err := s.g.setTimezoneFromIANA(zone); err != nil {
			return err
		}
	}
	for _, f := range cc.WriteFiles {
		data, err := decodeWriteFile(f.Encoding, f.Content)
		if err != nil {
			return fmt.Errorf("write_files %s: %w", f.Path, err)
		}
		if f.Append {
			s.g.fs.appendTo(f.Path, data)
		} else {
			s.g.fs.write(f.Path, data)
		}
	}
	for _, u := range cc.Users {
		if len(u.SSHAuthorizedKeys) > 0 {
			s.writeKeys(`C:\Users\`+u.Name+`\.ssh\authorized_keys`, u.SSHAuthorizedKeys)
		}
	}
	return nil
}

// decodeWriteFile handles the write_files encodings cloudbase-init knows.
func decodeWriteFile(encoding, content string) ([]byte, error) {
	data := []byte(content)
	enc := strings.ToLower(encoding)
	if strings.Contains(enc, "b64") || strings.Contains(enc, "base64") {
		var err error
		if data, err = base64.StdEncoding.DecodeString(content); err != nil {
			return nil, err
		}
	}
	if strings.HasPrefix(enc, "gz") {
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(io.LimitReader(r, 16<<20))
	}
	return data, nil
}
