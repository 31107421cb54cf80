package main

import (
	"archive/zip"
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
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
	// A gather that fails leaves no archive behind.
	failed := filepath.Join(t.TempDir(), "failed.tar.gz")
	g.Expect(run([]string{"logs", "--kubeconfig", kubeconfig, "-n", ns, "-o", failed, "--machine-deployment", "none"}, io.Discard)).
		To(MatchError("MachineDeployment logs/none has no Machines"))
	g.Expect(failed).NotTo(BeAnExistingFile())
}

// TestLogsGuest: a Machine whose node Node Log Query cannot read gets a log request on its
// HyperVMachine (render logs --guest auto); the answer's zip lands under guest/ (a name that
// would leave the folder is dropped), a request nobody answers ends in a note at the timeout, and
// the request is withdrawn either way. The manager's side is played here by the test; the
// harness e2e runs the real one.
func TestLogsGuest(t *testing.T) {
	if testing.Short() {
		t.Skip("envtest")
	}
	g := NewWithT(t)
	ctx := t.Context()
	const ns = "guestlogs"
	kubeconfig, c := selfManaged(t, g, ns)
	machine(ctx, g, c, ns, "win-md-0-quiet", "HyperVMachine", nil)
	hvm := &infrav1.HyperVMachine{ObjectMeta: metav1.ObjectMeta{Name: "win-md-0-quiet", Namespace: ns},
		Spec: infrav1.HyperVMachineSpec{ParentDisk: `C:\golden\windows-2022.vhdx`, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}}}
	create(ctx, g, c, hvm)

	out := filepath.Join(t.TempDir(), "quiet.tar.gz")
	g.Expect(run([]string{"logs", "--kubeconfig", kubeconfig, "-n", ns, "-o", out, "--guest-timeout", "1s", "--guest-credentials", "admin",
		"win-md-0-quiet"}, io.Discard)).To(Succeed())
	g.Expect(untar(g, out)["win-md-0-quiet/notes.txt"]).To(ContainSubstring("no guest logs: no answer from the infrastructure manager for HyperVMachine win-md-0-quiet"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(hvm), hvm)).To(Succeed())
	g.Expect(hvm.Annotations).NotTo(HaveKey(infrav1.CollectLogsAnnotation), "the request was not withdrawn")

	// The manager's answer.
	var archive bytes.Buffer
	zw := zip.NewWriter(&archive)
	for name, text := range map[string]string{"files/C/var/log/capwin/bootstrap.log": "step join failed", `state\hnsdiag.txt`: "nat", "../evil": "x"} {
		w, _ := zw.Create(name)
		_, _ = w.Write([]byte(text))
	}
	g.Expect(zw.Close()).To(Succeed())
	go func() {
		for ctx.Err() == nil {
			m := &infrav1.HyperVMachine{}
			if c.Get(ctx, client.ObjectKeyFromObject(hvm), m) == nil && m.Annotations[infrav1.CollectLogsAnnotation] != "" {
				_ = c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: infrav1.NodeLogsSecretName(m.Name), Namespace: ns,
					Annotations: map[string]string{infrav1.CollectLogsAnnotation: m.Annotations[infrav1.CollectLogsAnnotation]}},
					Type: infrav1.NodeLogsSecretType, Data: map[string][]byte{infrav1.NodeLogsArchiveKey: archive.Bytes()}})
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	out = filepath.Join(t.TempDir(), "answered.tar.gz")
	g.Expect(run([]string{"logs", "--kubeconfig", kubeconfig, "-n", ns, "-o", out, "win-md-0-quiet"}, io.Discard)).To(Succeed())
	files := untar(g, out)
	g.Expect(files["win-md-0-quiet/guest/files/C/var/log/capwin/bootstrap.log"]).To(Equal("step join failed"))
	g.Expect(files["win-md-0-quiet/guest/state/hnsdiag.txt"]).To(Equal("nat"))
	for name := range files {
		g.Expect(name).NotTo(ContainSubstring("evil"))
	}

	// --guest never asks nothing; a bad mode is refused.
	out = filepath.Join(t.TempDir(), "never.tar.gz")
	g.Expect(run([]string{"logs", "--kubeconfig", kubeconfig, "-n", ns, "-o", out, "--guest", "never", "win-md-0-quiet"}, io.Discard)).To(Succeed())
	g.Expect(untar(g, out)["win-md-0-quiet/notes.txt"]).NotTo(ContainSubstring("guest"))
	g.Expect(run([]string{"logs", "--kubeconfig", kubeconfig, "-n", ns, "--guest", "sometimes", "win-md-0-quiet"}, io.Discard)).
		To(MatchError(ContainSubstring(`--guest "sometimes": give auto, always or never`)))
}

// TestLogsHelp: `render logs -h` prints its usage; naming nothing or two things is an error.
func TestLogsHelp(t *testing.T) {
	g := NewWithT(t)
	var out bytes.Buffer
	err := run([]string{"logs", "-h"}, &out)
	g.Expect(err).To(MatchError(flag.ErrHelp))
	g.Expect(out.String()).To(HavePrefix(logsUsage + "\n"))
	g.Expect(logsUsage).To(ContainSubstring("[--guest auto|always|never] [--guest-credentials SECRET] (MACHINE | --machine-deployment NAME | --cluster NAME)"))
	for _, f := range []string{"-kubeconfig string", "-o string", "-machine-deployment string", "-cluster string", "-guest string", "-guest-credentials string", "-guest-timeout duration"} {
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
