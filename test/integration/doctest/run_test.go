package doctest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capwin/capwin/test/integration/doctest"
)

// before runs before a page's first block: what the reader has at that point and the docs before
// it do not leave behind. upgrades.md starts from a running cluster win1, which the quickstart
// generated into win1.yaml and deleted at its end. version-upgrades.md needs nothing: it follows
// upgrades.md, whose cluster win1 is still there.
var before = map[string]string{
	"docs/upgrades.md": "kubectl apply -f win1.yaml\n",
}

// after runs after a page's last block. After the quickstart: every flavor, generated with the
// values exported so far (install.md's, then the quickstart's vCenter and Hyper-V values), is
// admitted by the API server; the windows flavor was applied by the quickstart itself. The
// topology flavor's Cluster is applied as the quickstart says, again until Cluster API has read
// the new ClusterClass.
var after = map[string]string{
	"docs/quickstart.md": `generate() { clusterctl generate cluster win1 --kubernetes-version v1.36.3 \
  --control-plane-machine-count 1 --worker-machine-count 2 "$@"; }
for flavor in windows-flannel hyperv-windows hyperv-windows-flannel; do
  generate --flavor "$flavor" | kubectl apply --dry-run=server -o name -f -
done
kubectl create namespace docs-topology
generate -n docs-topology --flavor windows-topology > topology.yaml
tries=0
until kubectl apply -f topology.yaml; do sleep 5; ((++tries < 12)); done
generate -n docs-topology --flavor windows-topology-flannel | kubectl apply --dry-run=server -o name -f -
`,
}

// TestDocsRun runs the run, file and check blocks of runPages in one bash, in reading order, in a
// world where what needs the internet or real infrastructure has happened (see newWorld).
// kubectl's -w is dropped, so a documented watch lists once.
func TestDocsRun(t *testing.T) {
	w := newWorld(t)
	closed := newClosedNetwork(t)
	var script strings.Builder
	script.WriteString("set -euo pipefail\ntrap 'echo \"doctest: exit status $? at line $LINENO\" >&2' ERR\n")
	var starts []scriptLine // where each block begins in the script
	for _, page := range runPages {
		if p := before[page]; p != "" {
			starts = append(starts, w.add(&script, "before "+page, p))
		}
		for _, b := range readPage(t, page, true) {
			switch b.Kind {
			case doctest.Run:
				starts = append(starts, w.add(&script, b.Where(), dropWatch(b.Text)))
			case doctest.File:
				if err := os.WriteFile(filepath.Join(w.dir, b.Arg), []byte(b.Text), 0o644); err != nil {
					t.Fatal(err)
				}
				starts = append(starts, w.add(&script, b.Where(), check(b.Arg)))
			case doctest.Check:
				name := fmt.Sprintf("check-%d.yaml", b.Line)
				if err := os.WriteFile(filepath.Join(w.dir, name), []byte(b.Text), 0o644); err != nil {
					t.Fatal(err)
				}
				starts = append(starts, w.add(&script, b.Where(), check(name)))
			}
		}
		if a := after[page]; a != "" {
			starts = append(starts, w.add(&script, "after "+page, a))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir, cmd.Env = w.dir, append(w.env(), closed.env()...)
	out, err := cmd.CombinedOutput()
	t.Logf("output:\n%s", out)
	if err != nil {
		t.Fatalf("%v; %s", err, failedBlock(out, starts))
	}
	w.verify(t)
	w.verifyOffline(t, closed)
}

// check validates a YAML file as the API server would admit it, without storing it.
func check(file string) string { return "kubectl create --dry-run=server -f " + file + " -o name\n" }

type scriptLine struct {
	where string
	line  int
}

var watchFlag = regexp.MustCompile(`\s(-w|--watch)(\s|$)`)

// dropWatch removes kubectl's -w/--watch from the block's lines.
func dropWatch(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.Contains(l, "kubectl ") {
			lines[i] = watchFlag.ReplaceAllString(watchFlag.ReplaceAllString(l, "$2"), "$2")
		}
	}
	return strings.Join(lines, "\n")
}

// failedBlock names the block of the script line that the ERR trap reported.
func failedBlock(out []byte, starts []scriptLine) string {
	m := regexp.MustCompile(`doctest: exit status \d+ at line (\d+)`).FindSubmatch(out)
	if m == nil {
		return "no failing line reported"
	}
	n, _ := strconv.Atoi(string(m[1]))
	where := "before the first block"
	for _, s := range starts {
		if s.line <= n {
			where = fmt.Sprintf("%s, line %d of the block", s.where, n-s.line+1)
		}
	}
	return "failed in " + where
}

func (w *world) add(script *strings.Builder, where, text string) scriptLine {
	fmt.Fprintf(script, "echo %s\n", strconv.Quote("### "+where))
	start := strings.Count(script.String(), "\n") + 1
	script.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		script.WriteString("\n")
	}
	return scriptLine{where, start}
}

func (w *world) env() []string {
	return []string{
		"HOME=" + w.home,
		"PATH=" + strings.Join([]string{bin, "/usr/local/bin", "/usr/bin", "/bin"}, ":"), // install.md puts ~/.local/bin first
		"CLUSTERCTL_DISABLE_VERSIONCHECK=true",
		"LANG=C.UTF-8",
	}
}
