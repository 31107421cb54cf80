package userdata

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/capwin/capwin/internal/guestos"
)

//go:embed ps/bootstrap.ps1
var bootstrapBody string

// bootstrapScript is the static code after the data line: the network functions the launcher
// shares (internal/guestos: Set-Network, for the network step), then bootstrap.ps1.
var bootstrapScript = guestos.NetworkScript() + bootstrapBody

// Script markers. The data line is the only line that changes from node to node.
const (
	scriptHeader = "#ps1_sysnative\n"
	dataPrefix   = "$CapwinData = '"
	dataSuffix   = "'\n"
)

// Render returns the user data of one node in the requested format. Its errors name the node and
// the format.
func Render(in Input) ([]byte, error) {
	out, err := renderFormat(in)
	if err == nil {
		return out, nil
	}
	action := "render the bootstrap data (" + string(in.Format) + ")"
	if in.Format == "" {
		action = "render the bootstrap data (" + string(FormatCloudConfig) + ")"
	}
	if in.NodeName != "" {
		action += " of node " + in.NodeName
	}
	return nil, fmt.Errorf("%s: %w", action, err)
}

func renderFormat(in Input) ([]byte, error) {
	if err := check(&in); err != nil {
		return nil, err
	}
	if err := withKubeletPatch(&in); err != nil {
		return nil, err
	}
	switch in.Format {
	case FormatPowerShell:
		doc, err := buildDocument(&in, ModeStandalone)
		if err != nil {
			return nil, err
		}
		return Script(doc)
	case FormatCloudConfig, "":
		doc, err := buildDocument(&in, ModeCloudbaseInit)
		if err != nil {
			return nil, err
		}
		script, err := Script(doc)
		if err != nil {
			return nil, err
		}
		cc, err := cloudConfig(&in)
		if err != nil {
			return nil, fmt.Errorf("cloud-config part: %w", err)
		}
		return multipartMessage(cc, script)
	default:
		return nil, fmt.Errorf("unknown format %q (want %s or %s)", in.Format, FormatCloudConfig, FormatPowerShell)
	}
}

// Script renders the #ps1_sysnative script: header, the data line, then the static body.
func Script(doc *Document) ([]byte, error) {
	out, err := dataScript(doc, bootstrapScript)
	if err != nil {
		return nil, fmt.Errorf("marshal bootstrap data: %w", err)
	}
	return out, nil
}

// dataScript is a #ps1_sysnative script: header, the data line with v as base64 JSON, body.
func dataScript(v any, body string) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	encoded := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	b.Grow(len(scriptHeader) + len(dataPrefix) + len(encoded) + len(dataSuffix) + len(body))
	b.WriteString(scriptHeader)
	b.WriteString(dataPrefix)
	b.WriteString(encoded)
	b.WriteString(dataSuffix)
	b.WriteString(body)
	return []byte(b.String()), nil
}

// check rejects an Input that cannot make a node join; the reconciler turns this into a condition.
func check(in *Input) error {
	var missing []string
	for name, value := range map[string]string{
		"join.apiServerEndpoint": in.Join.APIServerEndpoint,
		"join.token":             in.Join.Token,
		"join.criSocket":         in.Join.CRISocket,
		"kubernetesVersion":      in.KubernetesVersion,
		"binaries.directory":     in.Binaries.Directory,
		"pauseImage":             in.PauseImage,
	} {
		if value == "" {
			missing = append(missing, name)
		}
	}
	if len(in.Join.CACertHashes) == 0 {
		missing = append(missing, "join.caCertHashes")
	}
	if len(missing) > 0 {
		return fmt.Errorf("bootstrap data needs %s", strings.Join(sorted(missing), ", "))
	}
	if err := checkUTF8(in); err != nil {
		return err
	}
	if err := checkPrintable(in); err != nil {
		return err
	}
	if strings.ContainsAny(in.Binaries.Directory, "\"\n\r\x00") {
		return errors.New("binaries.directory contains a quote or control character")
	}
	return nil
}
