package userdata

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// CertsDir is containerd's registry configuration root on the node (the CRI registry
// config_path). containerd has no default for it on Windows.
const CertsDir = containerDir + `\certs.d`

// CredentialsHost is the host containerd contacts for a registry itself, which its credentials
// are keyed by: Docker Hub's API host differs from the name images use.
func CredentialsHost(host string) string {
	if host == "docker.io" {
		return "registry-1.docker.io"
	}
	return host
}

// hostsFile is the top of containerd's hosts.toml; the mirrors ("host" tables) follow it and are
// tried in file order, the top-level server (the registry itself) last.
type hostsFile struct {
	// Server is left out: containerd then uses https://<host> (registry-1.docker.io for docker.io).
	CA         string `toml:"ca,omitempty"`
	SkipVerify bool   `toml:"skip_verify,omitempty"`
}

type hostEntry struct {
	Capabilities []string `toml:"capabilities"`
	CA           string   `toml:"ca,omitempty"`
	SkipVerify   bool     `toml:"skip_verify,omitempty"`
	OverridePath bool     `toml:"override_path,omitempty"`
}

// RegistryHost matches a registry host as image names spell it (or _default); it names a folder,
// so it can never hold a path separator.
var RegistryHost = regexp.MustCompile(`^(_default|[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?)$`)

// HostDirectory is the folder of a registry under CertsDir: containerd looks up "host:port" as
// "host_port_" first (the only spelling that works on Windows, whose file names have no ':').
func HostDirectory(host string) string {
	if i := strings.LastIndex(host, ":"); i > 0 {
		return host[:i] + "_" + host[i+1:] + "_"
	}
	return host
}

// registryHostFiles renders the folder of each registry: hosts.toml and the CA files it names
// (relative paths, which containerd resolves against the folder). Every listed host gets one, a
// host listed only for its credentials too: containerd uses _default's folder for a host without
// a folder, and an entry means exactly that host's settings.
func registryHostFiles(regs []Registry) ([]DocFile, error) {
	var out []DocFile
	for _, r := range regs {
		if !RegistryHost.MatchString(r.Host) || strings.Contains(r.Host, "..") {
			return nil, fmt.Errorf("registry host %q is not a host name[:port] or _default", r.Host)
		}
		dir := CertsDir + `\` + HostDirectory(r.Host)
		add := func(name, content string) {
			out = append(out, DocFile{Path: dir + `\` + name, Content: base64.StdEncoding.EncodeToString([]byte(content))})
		}
		hf := hostsFile{SkipVerify: r.Access.InsecureSkipVerify}
		if r.Access.CA != "" {
			hf.CA = "ca.crt"
			add(hf.CA, r.Access.CA)
		}
		// toml.Marshal sorts map keys; the mirrors' order is kept by writing them one by one.
		var mirrors strings.Builder
		for i, m := range r.Mirrors {
			e := hostEntry{Capabilities: m.Capabilities, SkipVerify: m.Access.InsecureSkipVerify, OverridePath: m.OverridePath}
			if len(e.Capabilities) == 0 {
				e.Capabilities = []string{"pull", "resolve"}
			}
			if m.Access.CA != "" {
				e.CA = fmt.Sprintf("mirror-%d.crt", i)
				add(e.CA, m.Access.CA)
			}
			// A JSON string is a TOML basic string; each mirror is its own [host."<url>"] table.
			key, err := json.Marshal(m.URL)
			if err != nil {
				return nil, fmt.Errorf("registry %s: mirror %s: %w", r.Host, m.URL, err)
			}
			body, err := toml.Marshal(e)
			if err != nil {
				return nil, fmt.Errorf("registry %s: mirror %s: %w", r.Host, m.URL, err)
			}
			fmt.Fprintf(&mirrors, "\n[host.%s]\n%s", key, body)
		}
		top, err := toml.Marshal(hf)
		if err != nil {
			return nil, fmt.Errorf("registry %s: %w", r.Host, err)
		}
		add("hosts.toml", "# Written by capwin's bootstrap from the WindowsConfig; changes here are overwritten.\n"+string(top)+mirrors.String())
	}
	return out, nil
}

// registryAuth is the CRI plugin's registry.configs: credentials by the host name containerd
// contacts (a mirror's host, or the registry's). It is the one place containerd 1.7 and 2.x both
// read static credentials from for pulls that bring none (the sandbox image, the kubelet's
// pulls without imagePullSecrets); hosts.toml has no credentials.
func registryAuth(regs []Registry) (map[string]criRegistryConfig, error) {
	out := map[string]criRegistryConfig{}
	add := func(host string, a Access) error {
		if a.Username == "" && a.Password == "" {
			return nil
		}
		if prev, ok := out[host]; ok && prev.Auth != (criAuth{Username: a.Username, Password: a.Password}) {
			return fmt.Errorf("two different credentials for host %s", host)
		}
		out[host] = criRegistryConfig{Auth: criAuth{Username: a.Username, Password: a.Password}}
		return nil
	}
	for _, r := range regs {
		if r.Host == "_default" && r.Access.Username != "" {
			return nil, fmt.Errorf("registry _default: credentials need a host name; set them on its mirrors")
		}
		if err := add(CredentialsHost(r.Host), r.Access); err != nil {
			return nil, err
		}
		for _, m := range r.Mirrors {
			u, err := url.Parse(m.URL)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("registry %s: mirror url %q has no host", r.Host, m.URL)
			}
			if err := add(u.Host, m.Access); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
