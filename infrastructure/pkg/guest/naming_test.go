package guest

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestTemplateName(t *testing.T) {
	d := NameData{Machine: "win1-windows-25hzq-rstz2", Cluster: "win1", Namespace: "team-a", UID: "0f3c"}
	for _, tc := range []struct{ template, want string }{
		{`{{ .cluster.name }}-{{ .random }}`, "win1-" + hash("0f3c", 0, 5)},
		{`WIN-{{ .machine.name | trunc -5 }}`, "win-rstz2"},
		{`{{ .namespace | replace "team-" "t" }}{{ .machine.name | trimPrefix "win1-windows-" | trunc 5 }}`, "ta25hzq"},
		{`{{ .machine.name | trimSuffix "-rstz2" | trunc 14 }}-`, "win1-windows-2"},
		{`{{ "IIS.Prod" | lower }}`, "iisprod"},
	} {
		got, err := TemplateName(tc.template, d, none)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.template, got, err, tc.want)
		}
	}
}

func TestTemplateNameRefuses(t *testing.T) {
	d := NameData{Machine: "win1-windows-25hzq-rstz2", Cluster: "win1", UID: "u"}
	for template, want := range map[string]string{
		`{{ .machine.name }}`:                           "24 characters: a Windows computer name has at most 15",
		`{{ .machine.uid }}`:                            "map has no entry for key",
		`{{ .machine.name | tr }}`:                      `function "tr" not defined`,
		`---`:                                           "no letter or digit",
		`{{ "0123" }}`:                                  "cannot be only digits",
		`{{ .machine.name | trunc`:                      "unclosed action",
		`{{ range 1000000000 }}a{{ end }}`:              "only text, actions, if and with",
		`{{ printf "%099999999d" 1 }}`:                  `function "printf" is not allowed`,
		`{{ define "a" }}x{{ end }}w{{ template "a" }}`: "define and block are not allowed",
		`{{ "a" | replace "" "aaaaaaaaaa" | replace "" "aaaaaaaaaa" | replace "" "aaaaaaaaaa" }}`: "more than 1024 characters",
	} {
		_, err := TemplateName(template, d, none)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", template, err, want)
		}
	}
}

// A taken name draws .random again; a template without it says so instead of looping.
func TestTemplateNameTaken(t *testing.T) {
	g := NewWithT(t)
	d := NameData{Machine: "win1-md-abcde-fghij", Cluster: "win1", UID: "u1"}
	first, err := TemplateName(`w-{{ .random }}`, d, none)
	g.Expect(err).NotTo(HaveOccurred())
	second, err := TemplateName(`w-{{ .random }}`, d, func(n string) bool { return n == first })
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second).NotTo(Equal(first))
	g.Expect(second).To(HavePrefix("w-"))
	_, err = TemplateName(`w-{{ .machine.name | trunc -5 }}`, d, func(string) bool { return true })
	g.Expect(err).To(MatchError(ContainSubstring(`gives "w-fghij", which another machine of the cluster has: use .random`)))
}

func TestCheckNamingTemplate(t *testing.T) {
	for template, want := range map[string]string{
		`{{ .cluster.name | trunc 9 }}-{{ .random }}`:             "",
		`{{ .machine.name | trunc -11 }}`:                         "",
		`{{ .cluster.name }}-{{ .random }}`:                       "at most 15",
		`{{ .machine.name | trunc 10 }}`:                          "gives two machines of one MachineDeployment the same name",
		`{{ .machine.name | trunc 4 }}{{ .namespace | trunc 9 }}`: "the same name",
		`{{ .node }}`: "map has no entry for key",
		`{{ if }}`:    "missing value for if",
	} {
		err := CheckNamingTemplate(template)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", template, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want %q", template, err, want)
		}
	}
}

// Whatever the template and names, a rendered name is a valid Windows computer name, and a
// template the admission check passes renders for any Machine.
func FuzzTemplateName(f *testing.F) {
	f.Add(`{{ .cluster.name | trunc 9 }}-{{ .random }}`, "win1-md-abcde-fghij", "win1")
	f.Add(`{{ .machine.name | replace "-" "" | trunc -12 }}`, "a.b-c", "x")
	f.Fuzz(func(t *testing.T, template, machine, cluster string) {
		d := NameData{Machine: machine, Cluster: cluster, Namespace: "default", UID: machine}
		name, err := TemplateName(template, d, none)
		if err != nil {
			return
		}
		if name != sanitize(name) || name == "" || len(name) > MaxComputerName || allDigits(name) {
			t.Fatalf("%q from %q is not a computer name", name, template)
		}
	})
}
