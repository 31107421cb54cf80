package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/internal/nodelogs"
)

// TestLogs runs `render logs` against a real apiserver (management and workload cluster at once):
// a Machine without a Node gets its story and a note; a Machine whose Node exists but whose
// kubelet cannot be reached (no node network here) gets its story, its Node and a note naming
// Node Log Query. The archive is a .tar.gz with a README.
func TestLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("envtest")
	}
	g := NewWithT(t)
	ctx := t.Context()
	const ns = "logs"
	kubeconfig, c := selfManaged(t, g, ns)
	lonely := machine(ctx, g, c, ns, "win-md-0-lonely", "VCenterMachine", nil)
	joined := machine(ctx, g, c, ns, "win-md-0-joined", "HyperVMachine", nil)
	for _, m := range []*clusterv1.Machine{lonely, joined} {
		m.Labels = map[string]string{clusterv1.ClusterNameLabel: "win"}
		g.Expect(c.Update(ctx, m)).To(Succeed())
	}
	joined.Status.NodeRef = clusterv1.MachineNodeReference{Name: "win-md-0-joined"}
	g.Expect(c.Status().Update(ctx, joined)).To(Succeed())
	create(ctx, g, c, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-md-0-joined",
		Labels: map[string]string{corev1.LabelOSStable: "windows"}}})

	out := filepath.Join(t.TempDir(), "logs.tar.gz")
	var summary bytes.Buffer
	g.Expect(run([]string{"logs", "--kubeconfig", kubeconfig, "-n", ns, "-o", out, "--cluster", "win"}, &summary)).To(Succeed())
	g.Expect(summary.String()).To(ContainSubstring("win-md-0-lonely (no Node): 2 files"))
	g.Expect(summary.String()).To(ContainSubstring("win-md-0-joined (win-md-0-joined): 3 files"))
	g.Expect(summary.String()).To(ContainSubstring("wrote " + out))
	files := untar(g, out)
	g.Expect(files).To(HaveKey("README.txt"))
	g.Expect(files["win-md-0-lonely/story.txt"]).To(ContainSubstring("Machine logs/win-md-0-lonely (Cluster win)"))
	g.Expect(files["win-md-0-lonely/notes.txt"]).To(ContainSubstring("no node logs: the Machine has no Node"))
	g.Expect(files["win-md-0-joined/node.yaml"]).To(ContainSubstring("name: win-md-0-joined"))
	g.Expect(files["win-md-0-joined/notes.txt"]).To(ContainSubstring("Node Log Query:"))

	// The archive is never written over.
	g.Expect(run([]string{"logs", "--kubeconfig", kubeconfig, "-n", ns, "-o", out, "win-md-0-lonely"}, io.Discard)).
		To(MatchError(ContainSubstring("exists")))
	g.Expect(run([]string{"logs", "--kubeconfig", kubeconfig, "-n", ns, "--machine-deployment", "none"}, io.Discard)).
		To(MatchError("MachineDeployment logs/none has no Machines"))
}

// TestLogsHelp: `render logs -h` prints its usage; naming nothing or two things is an error.
func TestLogsHelp(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	err := run([]string{"logs", "-h"}, &out)
	g.Expect(err).To(MatchError(flag.ErrHelp))
	g.Expect(out.String()).To(HavePrefix("usage: render logs [--kubeconfig FILE] [-n NAMESPACE] [-o FILE] (MACHINE | --machine-deployment NAME | --cluster NAME)\n"))
	for _, f := range []string{"-kubeconfig string", "-o string", "-machine-deployment string", "-cluster string"} {
		g.Expect(out.String()).To(ContainSubstring(f))
	}
	for _, args := range [][]string{{"logs"}, {"logs", "m", "--cluster", "c"}, {"logs", "m", "n"}} {
		g.Expect(run(args, io.Discard)).To(MatchError(ContainSubstring("name exactly one")), "%q", args)
	}
}

func untar(g Gomega, path string) map[string]string {
	f, err := os.Open(path)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	files, err := nodelogs.ReadArchive(f)
	g.Expect(err).NotTo(HaveOccurred())
	return files
}
