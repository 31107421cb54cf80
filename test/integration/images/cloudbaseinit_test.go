package images_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// option is one of cloudbase-init's (or oslo.log's) configuration options.
type option struct {
	Group           string   `json:"group"`
	Name            string   `json:"name"`
	Type            string   `json:"type"`
	Choices         []string `json:"choices"`
	DeprecatedNames []string `json:"deprecated_names"`
}

type optionSet struct {
	Version          string   `json:"version"`
	Options          []option `json:"options"`
	MetadataServices []string `json:"metadata_services"`
	Plugins          []string `json:"plugins"`
}

func readOptions(t *testing.T, file string) optionSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cloudbase-init", file))
	if err != nil {
		t.Fatal(err)
	}
	var s optionSet
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return s
}

// readINI reads an oslo.config file: [group] headers and name=value lines, # comments.
func readINI(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(path) //nolint:gosec // G304: the recipe's files
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	conf, group := map[string]map[string]string{}, ""
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			group = strings.Trim(line, "[]")
			if conf[group] != nil {
				t.Errorf("%s:%d: [%s] twice", path, n, group)
			}
			conf[group] = map[string]string{}
		default:
			name, value, ok := strings.Cut(line, "=")
			if !ok || group == "" {
				t.Errorf("%s:%d: %q is no name=value in a [group]", path, n, line)
				continue
			}
			if _, dup := conf[group][name]; dup {
				t.Errorf("%s:%d: %s set twice", path, n, name)
			}
			conf[group][name] = value
		}
	}
	return conf
}

// TestCloudbaseInitConfigs: each option of capwin's four configuration files is one that
// cloudbase-init (the version the recipe installs) or oslo.log defines, under its current name,
// with a value of its type and choices; the services and plugins named exist; and each file does
// what capwin's formats need and nothing that fights the bootstrap.
func TestCloudbaseInitConfigs(t *testing.T) {
	cbi := readOptions(t, "options-"+defaultOf(t, "cloudbase_init_version")+".json")
	known := map[string]option{}
	deprecated := map[string]string{}
	for _, o := range append(cbi.Options, readOptions(t, "oslo-log-options.json").Options...) {
		known[o.Group+"/"+o.Name] = o
		for _, d := range o.DeprecatedNames {
			deprecated[d] = o.Group + "/" + o.Name
		}
	}
	services := map[string]string{"vsphere": "cloudbaseinit.metadata.services.vmwareguestinfoservice.VMwareGuestInfoService",
		"hyperv": "cloudbaseinit.metadata.services.nocloudservice.NoCloudConfigDriveService"}
	// Plugins that would fight capwin's bootstrap: users and passwords, disks, licensing, updates.
	fighting := regexp.MustCompile(`createuser|setuserpassword|ephemeraldisk|licensing|updates|sanpolicy|pagefiles`)
	for hv, service := range services {
		for _, kind := range []string{"", "unattend-"} {
			path := filepath.Join(dir, "cloudbase-init", "cloudbase-init-"+kind+hv+".conf")
			conf := readINI(t, path)
			for group, values := range conf {
				for name, value := range values {
					key := group + "/" + name
					o, ok := known[key]
					if !ok {
						if now, old := deprecated[key]; old {
							t.Errorf("%s: %s is deprecated: use %s", path, key, now)
						} else {
							t.Errorf("%s: %s is no option of cloudbase-init %s or oslo.log", path, key, cbi.Version)
						}
						continue
					}
					checkValue(t, path, o, value)
				}
			}
			def := conf["DEFAULT"]
			if def["metadata_services"] != service {
				t.Errorf("%s: metadata_services=%s, want only %s", path, def["metadata_services"], service)
			}
			for _, p := range strings.Split(def["plugins"], ",") {
				if !slices.Contains(cbi.Plugins, p) {
					t.Errorf("%s: plugin %s is not in cloudbase-init %s", path, p, cbi.Version)
				}
				if fighting.MatchString(strings.ToLower(p)) {
					t.Errorf("%s: plugin %s would fight capwin's bootstrap", path, p)
				}
			}
			wantPlugins := []string{"cloudbaseinit.plugins.common.sethostname.SetHostNamePlugin", "cloudbaseinit.plugins.common.networkconfig.NetworkConfigPlugin"}
			reboot := "false"
			if kind == "" {
				wantPlugins = append(wantPlugins, "cloudbaseinit.plugins.common.userdata.UserDataPlugin")
				reboot = "true" // the bootstrap exits 1003 when a feature needs a restart
			}
			for _, p := range wantPlugins {
				if !strings.Contains(def["plugins"], p) {
					t.Errorf("%s: plugins lack %s", path, p)
				}
			}
			if def["allow_reboot"] != reboot {
				t.Errorf("%s: allow_reboot=%s, want %s", path, def["allow_reboot"], reboot)
			}
			if hv == "hyperv" && (conf["config_drive"]["types"] != "iso" || conf["config_drive"]["locations"] != "cdrom") {
				t.Errorf("%s: [config_drive] %v, want types=iso, locations=cdrom (capwin's cidata drive)", path, conf["config_drive"])
			}
		}
	}
	for _, s := range services {
		if !slices.Contains(cbi.MetadataServices, s) {
			t.Errorf("cloudbase-init %s has no %s", cbi.Version, s)
		}
	}
	if v := strings.Split(cbi.Version, "."); len(v) != 3 || v[0] != "1" || v[1] != "1" || atoi(v[2]) < 5 {
		t.Errorf("the recipe installs cloudbase-init %s; capwin needs 1.1.5 or later", cbi.Version)
	}
}

func checkValue(t *testing.T, path string, o option, value string) {
	t.Helper()
	switch o.Type {
	case "boolean":
		if value != "true" && value != "false" {
			t.Errorf("%s: %s=%s is no boolean", path, o.Name, value)
		}
	case "integer", "port":
		if _, err := strconv.Atoi(value); err != nil {
			t.Errorf("%s: %s=%s is no integer", path, o.Name, value)
		}
	}
	if len(o.Choices) > 0 && !slices.Contains(o.Choices, value) {
		t.Errorf("%s: %s=%s is none of %v", path, o.Name, value, o.Choices)
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// defaultOf is a variable's default in variables.pkr.hcl (a plain string).
func defaultOf(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "variables.pkr.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)variable "` + name + `" \{.*?default\s*=\s*"([^"]*)"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("variables.pkr.hcl: no string default for %s", name)
	}
	return string(m[1])
}
