package userdata

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// FuzzRegistries feeds arbitrary registry hosts, mirror URLs, CA data and credentials to the
// renderer: a host that is no host name is refused (it names a folder on the node), and every
// accepted value comes back unchanged from config.toml, hosts.toml and the CA file, so no value
// can add a key or a table of its own.
func FuzzRegistries(f *testing.F) {
	f.Add("registry.corp.example:5000", "https://mirror.corp.example/v2/x", "-----BEGIN CERTIFICATE-----\n", "robot", "p'a\"ss")
	f.Add("..", "https://m\"]\n[plugins]\n", "ca\x00", "u\nx = 1", "']\n[grpc]\naddress = 'x'")
	f.Add("docker.io", "http://a/'''", "\"\"\"", "", "\\u0000")
	f.Fuzz(func(t *testing.T, host, mirrorURL, ca, user, password string) {
		in := minimalInput(FormatPowerShell)
		in.Registries = []Registry{{Host: host, Mirrors: []Mirror{{URL: mirrorURL, Access: Access{CA: ca, Username: user, Password: password}}}}}
		out, err := Render(in)
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "is not a host name") || strings.Contains(msg, "has no host") || strings.Contains(msg, "not valid UTF-8") ||
				strings.Contains(msg, "credentials need a host name") {
				return // refused with a clear error, as it must be
			}
			t.Fatalf("Render: %v", err)
		}
		u, err := Unpack(out)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := DecodeDocument(u.Data)
		if err != nil {
			t.Fatal(err)
		}
		checkHostsFile(t, doc, host, mirrorURL, ca)
		if user != "" || password != "" {
			checkAuth(t, doc.Containerd.Config, mirrorURL, user, password)
		}
	})
}

func checkHostsFile(t *testing.T, doc *Document, host, mirrorURL, ca string) {
	t.Helper()
	files := map[string]string{}
	for _, f := range doc.Containerd.Hosts {
		data, _ := base64.StdEncoding.DecodeString(f.Content)
		files[f.Path] = string(data)
	}
	dir := CertsDir + `\` + HostDirectory(host) + `\`
	var hosts struct {
		Host map[string]struct {
			CA string `toml:"ca"`
		} `toml:"host"`
	}
	if err := toml.Unmarshal([]byte(files[dir+"hosts.toml"]), &hosts); err != nil {
		t.Fatalf("hosts.toml does not parse: %v\n%s", err, files[dir+"hosts.toml"])
	}
	if len(hosts.Host) != 1 {
		t.Fatalf("hosts.toml has mirrors %v, want only %q", hosts.Host, mirrorURL)
	}
	m, ok := hosts.Host[mirrorURL]
	if !ok {
		t.Fatalf("hosts.toml has mirrors %v, want %q", hosts.Host, mirrorURL)
	}
	if ca != "" && files[dir+m.CA] != ca {
		t.Fatalf("CA file %s changed", m.CA)
	}
}

func checkAuth(t *testing.T, config, mirrorURL, user, password string) {
	t.Helper()
	var cfg struct {
		Plugins map[string]struct {
			Registry struct {
				Configs map[string]struct {
					Auth criAuth `toml:"auth"`
				} `toml:"configs"`
			} `toml:"registry"`
		} `toml:"plugins"`
	}
	if err := toml.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatalf("config.toml does not parse: %v", err)
	}
	u, _ := url.Parse(mirrorURL)
	configs := cfg.Plugins["io.containerd.grpc.v1.cri"].Registry.Configs
	if len(configs) != 1 || configs[u.Host].Auth != (criAuth{Username: user, Password: password}) {
		t.Fatalf("credentials for %q came back as %+v", u.Host, configs)
	}
}
