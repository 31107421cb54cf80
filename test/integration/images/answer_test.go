package images_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// reference is what the answer file may name: Windows' unattend reference, kept as data.
type reference struct {
	Namespace           string                         `json:"namespace"`
	Passes              []string                       `json:"passes"`
	ComponentAttributes map[string]string              `json:"component_attributes"`
	Components          map[string]map[string][]string `json:"components"` // component -> setting -> valid passes
}

type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []node     `xml:",any"`
}

// TestAnswerFile renders the answer file as locals.pkr.hcl does (a password with XML's special
// characters, escaped as local.admin_password_xml escapes them) and checks it is well-formed and
// names only passes, components and settings of Windows' unattend reference, each in a pass where
// it is valid, with the attributes of an amd64 component.
func TestAnswerFile(t *testing.T) {
	tpl, err := os.ReadFile(filepath.Join(dir, "answer", "autounattend.xml.pkrtpl"))
	if err != nil {
		t.Fatal(err)
	}
	locals, err := os.ReadFile(filepath.Join(dir, "locals.pkr.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	// The template's ${...} are exactly the names templatefile gets.
	m := regexp.MustCompile(`templatefile\("\$\{path\.root\}/answer/autounattend\.xml\.pkrtpl", \{([^}]*)\}\)`).FindSubmatch(locals)
	if m == nil {
		t.Fatal("locals.pkr.hcl does not render answer/autounattend.xml.pkrtpl with templatefile")
	}
	var given []string
	for _, kv := range strings.Split(string(m[1]), ",") {
		given = append(given, strings.TrimSpace(strings.SplitN(kv, "=", 2)[0]))
	}
	used := map[string]bool{}
	for _, u := range regexp.MustCompile(`\$\{([a-z_]+)\}`).FindAllStringSubmatch(string(tpl), -1) {
		used[u[1]] = true
		if !slices.Contains(given, u[1]) {
			t.Errorf("the answer file uses ${%s}, which templatefile does not give", u[1])
		}
	}
	if len(used) != len(given) {
		t.Errorf("templatefile gives %v, the answer file uses %v", given, used)
	}
	escaped := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(`P&ss<w>rd"1`)
	rendered := strings.NewReplacer("${image_name}", "Windows Server 2025 SERVERDATACENTERCORE", "${admin_password}", escaped).Replace(string(tpl))
	var root node
	if err := xml.Unmarshal([]byte(rendered), &root); err != nil {
		t.Fatalf("the rendered answer file is not well-formed XML: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "answer", "unattend-reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if root.XMLName.Local != "unattend" || root.XMLName.Space != ref.Namespace {
		t.Fatalf("root element %v, want unattend in %s", root.XMLName, ref.Namespace)
	}
	seen := map[string]bool{}
	for _, settings := range root.Children {
		pass := attr(settings, "pass")
		if settings.XMLName.Local != "settings" || !slices.Contains(ref.Passes, pass) {
			t.Errorf("<%s pass=%q> is no configuration pass", settings.XMLName.Local, pass)
			continue
		}
		for _, c := range settings.Children {
			name := attr(c, "name")
			valid, ok := ref.Components[name]
			if c.XMLName.Local != "component" || !ok {
				t.Errorf("pass %s: <%s name=%q> is not a component of the reference", pass, c.XMLName.Local, name)
				continue
			}
			for k, v := range ref.ComponentAttributes {
				if attr(c, k) != v {
					t.Errorf("pass %s, %s: %s=%q, want %q", pass, name, k, attr(c, k), v)
				}
			}
			for _, s := range c.Children {
				seen[name+"/"+s.XMLName.Local] = true
				passes, ok := valid[s.XMLName.Local]
				if !ok {
					t.Errorf("pass %s, %s: %s is no setting of the component", pass, name, s.XMLName.Local)
				} else if !slices.Contains(passes, pass) {
					t.Errorf("pass %s, %s: %s is valid only in %v", pass, name, s.XMLName.Local, passes)
				}
			}
		}
	}
	for _, want := range []string{"Microsoft-Windows-Setup/DiskConfiguration", "Microsoft-Windows-Setup/ImageInstall",
		"Microsoft-Windows-Shell-Setup/UserAccounts", "Microsoft-Windows-Shell-Setup/FirstLogonCommands"} {
		if !seen[want] {
			t.Errorf("the answer file sets no %s", want)
		}
	}
	if !strings.Contains(rendered, "<Value>"+escaped+"</Value>") {
		t.Error("the password does not reach the answer file as escaped XML text")
	}
}

func attr(n node, name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
