// Command helmrender renders a Helm chart from a local directory into one
// static YAML manifest, the way `helm template` would, using only Helm's Go
// library (chart loader, values handling and the template engine). It is used
// by hack/e2e/certmanager/build.sh to produce cert-manager.yaml from the chart
// that ships inside the github.com/cert-manager/cert-manager Go module.
//
// Output order: optional --prepend files verbatim, then every rendered
// CustomResourceDefinition, then all other rendered resources in Helm's install
// order. Hooks are rendered like ordinary resources (as `helm template` does).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
)

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "helmrender: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		chartDir    = flag.String("chart", "", "path of the chart directory (required)")
		releaseName = flag.String("name", "cert-manager", "release name")
		namespace   = flag.String("namespace", "cert-manager", "release namespace")
		version     = flag.String("version", "", "if set, overrides the chart's version and appVersion")
		kubeVersion = flag.String("kube-version", "1.29.0", "Kubernetes version for .Capabilities.KubeVersion")
		output      = flag.String("o", "-", "output file, - for stdout")
		sets        stringList
		prepends    stringList
		commands    stringList
	)
	flag.Var(&sets, "set", "a value in Helm's --set syntax (repeatable)")
	flag.Var(&commands, "command", "CONTAINER=PATH: give every container named CONTAINER the command [PATH] (repeatable)")
	flag.Var(&prepends, "prepend", "a YAML file to copy to the top of the output (repeatable)")
	flag.Parse()
	if *chartDir == "" || flag.NArg() != 0 {
		flag.Usage()
		return fmt.Errorf("--chart is required and no positional arguments are accepted")
	}

	chrt, err := loader.LoadDir(*chartDir)
	if err != nil {
		return fmt.Errorf("loading chart %s: %w", *chartDir, err)
	}
	if *version != "" {
		chrt.Metadata.Version = strings.TrimPrefix(*version, "v")
		chrt.Metadata.AppVersion = *version
	}

	overrides := map[string]interface{}{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, overrides); err != nil {
			return fmt.Errorf("parsing --set %q: %w", s, err)
		}
	}

	kv, err := chartutil.ParseKubeVersion(*kubeVersion)
	if err != nil {
		return fmt.Errorf("parsing --kube-version: %w", err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv

	if err := chartutil.ProcessDependenciesWithMerge(chrt, overrides); err != nil {
		return fmt.Errorf("processing chart dependencies: %w", err)
	}
	values, err := chartutil.ToRenderValues(chrt, overrides, chartutil.ReleaseOptions{
		Name:      *releaseName,
		Namespace: *namespace,
		Revision:  1,
		IsInstall: true,
	}, caps)
	if err != nil {
		return fmt.Errorf("computing values: %w", err)
	}

	files, err := engine.Render(chrt, values)
	if err != nil {
		return fmt.Errorf("rendering chart: %w", err)
	}
	// NOTES.txt and partials are not manifests.
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(path.Base(name), "_") {
			delete(files, name)
		}
	}

	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return fmt.Errorf("sorting manifests: %w", err)
	}

	var crds, rest []releaseutil.Manifest
	for _, m := range manifests {
		if m.Head != nil && m.Head.Kind == "CustomResourceDefinition" {
			crds = append(crds, m)
		} else {
			rest = append(rest, m)
		}
	}
	sort.SliceStable(crds, func(i, j int) bool { return crds[i].Head.Metadata.Name < crds[j].Head.Metadata.Name })

	for _, c := range commands {
		container, path, ok := strings.Cut(c, "=")
		if !ok || container == "" || path == "" {
			return fmt.Errorf("--command %q: want CONTAINER=PATH", c)
		}
		found := false
		for i := range rest {
			content, n, err := setCommand(rest[i].Content, container, path)
			if err != nil {
				return err
			}
			rest[i].Content = content
			found = found || n > 0
		}
		if !found {
			return fmt.Errorf("--command %q: no container named %s in the rendered chart", c, container)
		}
	}

	var out bytes.Buffer
	first := true
	emit := func(source, content string) {
		content = strings.TrimSpace(content)
		if content == "" {
			return
		}
		if !first {
			out.WriteString("---\n")
		}
		first = false
		if source != "" {
			fmt.Fprintf(&out, "# Source: %s\n", source)
		}
		out.WriteString(content)
		out.WriteString("\n")
	}
	for _, p := range prepends {
		b, err := os.ReadFile(p) //nolint:gosec // G304: a manifest named on this command line
		if err != nil {
			return err
		}
		emit("", strings.TrimPrefix(strings.TrimSpace(string(b)), "---"))
	}
	for _, m := range crds {
		emit(m.Name, m.Content)
	}
	for _, m := range rest {
		emit(m.Name, m.Content)
	}
	for _, h := range hooks {
		emit(h.Path, h.Manifest)
	}

	if *output == "-" {
		_, err = os.Stdout.Write(out.Bytes())
		return err
	}
	tmp := *output + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, *output)
}

// setCommand inserts `command: ["path"]` into every container entry
// `- name: container` (an entry that has an image field) of a rendered
// manifest, keeping the chart's formatting. It returns the new text and the
// number of insertions, or an error if such a container already has a command.
func setCommand(manifest, container, path string) (string, int, error) {
	lines := strings.Split(manifest, "\n")
	out := make([]string, 0, len(lines)+1)
	n := 0
	for i, line := range lines {
		out = append(out, line)
		trimmed := strings.TrimLeft(line, " ")
		if trimmed != "- name: "+container {
			continue
		}
		indent := strings.Repeat(" ", len(line)-len(trimmed)+2)
		isContainer := false
		for _, l := range lines[i+1:] {
			if !strings.HasPrefix(l, indent) {
				break
			}
			switch {
			case strings.HasPrefix(l, indent+"command:"):
				return "", 0, fmt.Errorf("container %s already has a command", container)
			case strings.HasPrefix(l, indent+"image:"):
				isContainer = true
			}
		}
		if isContainer {
			out = append(out, fmt.Sprintf("%scommand: [%q]", indent, path))
			n++
		}
	}
	return strings.Join(out, "\n"), n, nil
}
