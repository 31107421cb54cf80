package userdata

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
)

// Unpacked is user data taken apart the way cloudbase-init takes it apart.
type Unpacked struct {
	// CloudConfig is the #cloud-config part (nil when there is none).
	CloudConfig []byte
	// Script is the #ps1_sysnative script.
	Script []byte
	// Data is the raw JSON data document from the script's data line.
	Data []byte
}

// Unpack reads user data as cloudbase-init does: gzip (by magic), then a multipart MIME document
// (parts by Content-Type) or a single script. It is used by the simulated guest and the tests.
func Unpack(userData []byte) (*Unpacked, error) {
	if bytes.HasPrefix(userData, []byte{0x1f, 0x8b}) {
		r, err := gzip.NewReader(bytes.NewReader(userData))
		if err != nil {
			return nil, fmt.Errorf("user data: %w", err)
		}
		if userData, err = io.ReadAll(io.LimitReader(r, maxFileBytes)); err != nil {
			return nil, fmt.Errorf("user data: %w", err)
		}
	}
	out := &Unpacked{}
	if bytes.HasPrefix(userData, []byte("Content-Type: multipart")) {
		if err := out.readMultipart(userData); err != nil {
			return nil, err
		}
	} else {
		out.Script = userData
	}
	if out.Script == nil {
		return nil, errors.New("user data has no PowerShell part")
	}
	data, err := ExtractData(out.Script)
	if err != nil {
		return nil, err
	}
	out.Data = data
	return out, nil
}

func (u *Unpacked) readMultipart(userData []byte) error {
	msg, err := mail.ReadMessage(bytes.NewReader(userData))
	if err != nil {
		return fmt.Errorf("user data MIME: %w", err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return fmt.Errorf("user data MIME: %w", err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("user data MIME: %w", err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return fmt.Errorf("user data MIME part %s: %w", p.FileName(), err)
		}
		mediaType, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch {
		case mediaType == "text/cloud-config":
			u.CloudConfig = body
		case mediaType == "text/x-shellscript" && strings.HasSuffix(p.FileName(), ".ps1"):
			u.Script = body
		}
	}
}

// ExtractData returns the JSON data document of a rendered script.
func ExtractData(script []byte) ([]byte, error) {
	s := bufio.NewScanner(bytes.NewReader(script))
	s.Buffer(make([]byte, 0, 64<<10), len(script)+1)
	for s.Scan() {
		line := strings.TrimRight(s.Text(), "\r")
		encoded, ok := strings.CutPrefix(line, dataPrefix)
		if !ok {
			continue
		}
		encoded, ok = strings.CutSuffix(encoded, "'")
		if !ok {
			return nil, errors.New("script data line is not terminated")
		}
		return base64.StdEncoding.DecodeString(encoded)
	}
	return nil, errors.New("script has no $CapwinData line")
}

// DecodeDocument parses a data document.
func DecodeDocument(data []byte) (*Document, error) {
	doc := &Document{}
	if err := json.Unmarshal(data, doc); err != nil {
		return nil, fmt.Errorf("bootstrap data: %w", err)
	}
	return doc, nil
}
