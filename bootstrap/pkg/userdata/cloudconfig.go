package userdata

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"sort"

	"sigs.k8s.io/yaml"
)

// The cloud-config keys capwin uses of those cloudbase-init implements. Time zone and time
// service are left to the script: cloudbase-init's set_timezone accepts only IANA names, the
// API's timezone is a Windows id.
type cloudConfigDoc struct {
	WriteFiles []writeFile `json:"write_files,omitempty"`
	Users      []ccUser    `json:"users,omitempty"`
}

type writeFile struct {
	Path     string `json:"path"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
}

type ccUser struct {
	Name              string   `json:"name"`
	Groups            []string `json:"groups,omitempty"`
	SSHAuthorizedKeys []string `json:"ssh_authorized_keys,omitempty"`
}

// Part file names. cloudbase-init runs a text/x-shellscript part by its extension; a part
// without a file name fails.
const (
	CloudConfigFileName = "cloud-config.yaml"
	ScriptFileName      = "capwin-bootstrap.ps1"
)

// cloudConfig renders the #cloud-config part; nil when there is nothing for it. Files that are
// appended are left to the script, which appends once even when cloudbase-init runs the user
// data again after a reboot.
func cloudConfig(in *Input) ([]byte, error) {
	var doc cloudConfigDoc
	for _, f := range in.Files {
		if f.Append {
			continue
		}
		content, err := decodeFile(f)
		if err != nil {
			return nil, err
		}
		doc.WriteFiles = append(doc.WriteFiles, writeFile{Path: f.Path, Encoding: "b64", Content: base64.StdEncoding.EncodeToString(content)})
	}
	for _, u := range in.Users {
		doc.Users = append(doc.Users, ccUser(u))
	}
	if doc.WriteFiles == nil && doc.Users == nil {
		return nil, nil
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, fmt.Errorf("marshal cloud-config: %w", err)
	}
	return append([]byte("#cloud-config\n"), out...), nil
}

// multipartMessage builds the MIME document cloudbase-init reads. The boundary is derived from
// the content, so the same input always renders the same bytes.
func multipartMessage(cloudConfig, script []byte) ([]byte, error) {
	sum := sha256.New()
	sum.Write(cloudConfig)
	sum.Write(script)
	boundary := "capwin-" + hex.EncodeToString(sum.Sum(nil))[:32]
	if bytes.Contains(cloudConfig, []byte(boundary)) || bytes.Contains(script, []byte(boundary)) {
		return nil, fmt.Errorf("MIME boundary %s occurs in the content", boundary)
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if err := w.SetBoundary(boundary); err != nil {
		return nil, fmt.Errorf("MIME boundary %s: %w", boundary, err)
	}
	parts := []struct {
		contentType, name string
		data              []byte
	}{
		{"text/cloud-config", CloudConfigFileName, cloudConfig},
		{"text/x-shellscript", ScriptFileName, script},
	}
	for _, p := range parts {
		if p.data == nil {
			continue
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", p.contentType+`; charset="utf-8"`)
		h.Set("MIME-Version", "1.0")
		h.Set("Content-Transfer-Encoding", "8bit")
		h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", p.name))
		pw, err := w.CreatePart(h)
		if err != nil {
			return nil, fmt.Errorf("MIME part %s: %w", p.name, err)
		}
		if _, err := pw.Write(p.data); err != nil {
			return nil, fmt.Errorf("MIME part %s: %w", p.name, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("close the MIME message: %w", err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "Content-Type: multipart/mixed; boundary=\"%s\"\nMIME-Version: 1.0\n\n", boundary)
	out.Write(body.Bytes())
	return out.Bytes(), nil
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}
