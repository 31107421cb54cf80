package doctest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	md := "# T\n\n<!-- doctest: run -->\n```sh\necho hi\n```\n\n```mermaid\nflowchart\n```\n" +
		"<!-- doctest: file a.yaml -->\n```yaml\nkind: X\n```\n<!-- doctest: skip needs a vCenter -->\n```sh\ngovc ls\n```\n"
	blocks, err := Parse("p.md", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	want := []Block{
		{Page: "p.md", Line: 4, Lang: "sh", Kind: Run, Text: "echo hi\n"},
		{Page: "p.md", Line: 12, Lang: "yaml", Kind: File, Arg: "a.yaml", Text: "kind: X\n"},
		{Page: "p.md", Line: 16, Lang: "sh", Kind: Skip, Arg: "needs a vCenter", Text: "govc ls\n"},
	}
	if !reflect.DeepEqual(blocks, want) {
		t.Fatalf("got %+v\nwant %+v", blocks, want)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, md := range map[string]string{
		"no marker":        "```sh\nls\n```\n",
		"blank before":     "<!-- doctest: run -->\n\n```sh\nls\n```\n",
		"skip no reason":   "<!-- doctest: skip -->\n```sh\nls\n```\n",
		"run on yaml":      "<!-- doctest: run -->\n```yaml\na: 1\n```\n",
		"file on sh":       "<!-- doctest: file x -->\n```sh\nls\n```\n",
		"file with path":   "<!-- doctest: file a/b -->\n```yaml\na: 1\n```\n",
		"unknown kind":     "<!-- doctest: maybe -->\n```sh\nls\n```\n",
		"marker on a text": "<!-- doctest: run -->\n```text\nls\n```\n",
		"marker, no lang":  "<!-- doctest: run -->\n```\nls\n```\n",
		"never closed":     "<!-- doctest: run -->\n```sh\nls\n",
	} {
		if _, err := Parse("p.md", []byte(md)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Blocks("p.md", []byte("```sh\nls\n```\n")); err != nil {
		t.Errorf("Blocks needs no marker: %v", err)
	}
}

func TestCommands(t *testing.T) {
	text := `VERSION=v1 make release REGISTRY=r   # a comment
cp a \
   b "$HOME/x y" 2>&1 | grep -E '^(a|b) ' > out.txt
cat >> f <<EOF
providers: not a command
EOF
(cd out && sha256sum -c x) ; kubectl patch md m -p '
{"a": 1}'
export T=$(govc about.cert -k | awk '{print $2}')
kubectl get x -w            # or: kubectl get y
`
	var got [][]string
	var lines []int
	for _, c := range Commands(text) {
		got = append(got, c.Words)
		lines = append(lines, c.Line)
	}
	want := [][]string{
		{"make", "release", "REGISTRY=r"},
		{"cp", "a", "b", "$HOME/x y"},
		{"grep", "-E", "^(a|b) "},
		{"cat"},
		{"cd", "out"},
		{"sha256sum", "-c", "x"},
		{"kubectl", "patch", "md", "m", "-p", "\n{\"a\": 1}"},
		{"export", "T=$(govc about.cert -k | awk '{print $2}')"},
		{"kubectl", "get", "x", "-w"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if wantLines := []int{1, 2, 3, 4, 7, 7, 7, 9, 10}; !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("lines %v, want %v", lines, wantLines)
	}
}

const cobraHelp = `Generate templates for creating workload clusters.

Usage:
  clusterctl generate cluster NAME [flags]

Available Commands:
  cluster     Generate templates
  provider    Generate a provider

Flags:
  -n, --target-namespace string   The namespace
      --list-variables            Returns the list
      --worker-machine-count int  Workers

Global Flags:
  -v, --v int   Number for the log level verbosity
`

const kubectlHelp = `Examples:
  # List all pods
  kubectl get pods

Options:
    -A, --all-namespaces=false:
	If present, list across namespaces.

    -o, --output='':
	Output format.

    -L, --label-columns=[]:
	Columns.
`

const goFlagHelp = `Usage of render:
  -api-server string
    	control plane endpoint host:port (required)
  -gzip
    	gzip the output
`

func TestParseHelp(t *testing.T) {
	for name, c := range map[string]struct {
		out   string
		flags map[string]bool
		subs  []string
	}{
		"cobra": {cobraHelp, map[string]bool{"n": true, "target-namespace": true, "list-variables": false,
			"worker-machine-count": true, "v": true}, []string{"cluster", "provider"}},
		"kubectl": {kubectlHelp, map[string]bool{"A": false, "all-namespaces": false, "o": true, "output": true,
			"L": true, "label-columns": true}, nil},
		"go flag": {goFlagHelp, map[string]bool{"api-server": true, "gzip": false}, nil},
	} {
		h := ParseHelp(c.out)
		if !reflect.DeepEqual(h.Flags, c.flags) {
			t.Errorf("%s: flags %v, want %v", name, h.Flags, c.flags)
		}
		var subs []string
		for s := range h.Subcommands {
			subs = append(subs, s)
		}
		if strings.Join(slices.Sorted(slices.Values(subs)), " ") != strings.Join(c.subs, " ") {
			t.Errorf("%s: subcommands %v, want %v", name, subs, c.subs)
		}
	}
}

func TestUnknownFlags(t *testing.T) {
	help := func(path []string) (Help, error) {
		switch strings.Join(path, " ") {
		case "":
			return Help{Flags: map[string]bool{"kubeconfig": true}, Subcommands: map[string]bool{"generate": true}}, nil
		case "generate":
			return Help{Flags: map[string]bool{}, Subcommands: map[string]bool{"cluster": true}}, nil
		}
		return ParseHelp(cobraHelp), nil
	}
	args := strings.Fields("--kubeconfig generate generate cluster win1 -n default --list-variables provider --worker-machine-count=2 --flavour x")
	got, err := UnknownFlags(args, help)
	if err != nil {
		t.Fatal(err)
	}
	// --kubeconfig takes "generate" as its value; "provider" after the name win1 is an argument
	if want := []string{"generate cluster --flavour"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
