package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/diagnostics"
	"github.com/capwin/capwin/internal/test/envtest"
)

// TestDiagnostics runs `render diagnostics` against a real apiserver holding Machines in three
// states: waiting for the control plane, bootstrap failed in the guest, and joined. The workload
// cluster of the Cluster is the same apiserver (its kubeconfig Secret points there).
func TestDiagnostics(t *testing.T) {
	if testing.Short() {
		t.Skip("envtest")
	}
	g := NewWithT(t)
	ctx := t.Context()
	const ns = "diag"
	kubeconfig, c := selfManaged(t, g, ns)

	// 1. The control plane is not initialized: no bootstrap data, no VM.
	waiting := machine(ctx, g, c, ns, "win-md-0-wait", "VCenterMachine", nil)
	cfg := &bootstrapv1.WindowsConfig{ObjectMeta: metav1.ObjectMeta{Name: waiting.Name, Namespace: ns}}
	create(ctx, g, c, cfg)
	cfg.Status.Conditions = []metav1.Condition{{Type: bootstrapv1.DataSecretAvailableCondition, Status: metav1.ConditionFalse,
		Reason: bootstrapv1.WaitingForControlPlaneInitializedReason, Message: "Waiting for the Cluster's control plane to be initialized",
		LastTransitionTime: metav1.Now()}}
	g.Expect(c.Status().Update(ctx, cfg)).To(Succeed())
	out := diagnose(g, kubeconfig, "-n", ns, waiting.Name)
	g.Expect(out).To(ContainSubstring("Machine diag/win-md-0-wait (Cluster win)"))
	g.Expect(out).To(ContainSubstring("WindowsConfig diag/win-md-0-wait"))
	g.Expect(out).To(MatchRegexp(`DataSecretAvailable\s+False\s+WaitingForControlPlaneInitialized`))
	g.Expect(out).To(ContainSubstring("no Node yet: the bootstrap data is not written yet: WaitingForControlPlaneInitialized: Waiting for the Cluster's control plane to be initialized"))
	g.Expect(out).To(ContainSubstring(`kubectl annotate machine -n diag win-md-0-wait cluster.x-k8s.io/skip-remediation=""`))

	// 2. The guest's bootstrap failed at containerd; looked up by the VCenterMachine's name, which
	// differs from the Machine's.
	failed := machine(ctx, g, c, ns, "win-md-0-fail", "VCenterMachine", ptr.To("win-md-0-fail-bootstrap"))
	vcm := &infrav1.VCenterMachine{ObjectMeta: metav1.ObjectMeta{Name: "win-md-0-fail-vc", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: failed.Name, UID: failed.UID}}},
		Spec: infrav1.VCenterMachineSpec{Template: "windows-2022", CloneMode: infrav1.FullClone, Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}}}}
	create(ctx, g, c, vcm)
	vcm.Status = infrav1.MachineStatus{
		Initialization: infrav1.MachineInitializationStatus{Provisioned: ptr.To(true)},
		Provisioning:   infrav1.Provisioning{State: infrav1.StateProvisioned, Since: metav1.Now()},
		VM:             infrav1.VMReference{ID: "vm-42", InstanceUUID: string(vcm.UID)},
		ComputerName:   "win-md-0-fail",
		Addresses:      []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.21"}},
		Bootstrap: infrav1.BootstrapStatus{Step: "containerd", State: "Failed", Message: "containerd config: access denied",
			LogTail: "2026-01-01T00:00:00Z [containerd] starting\n2026-01-01T00:00:01Z [containerd] failed: access denied"},
		Conditions: []metav1.Condition{{Type: infrav1.BootstrapSucceededCondition, Status: metav1.ConditionFalse, Reason: infrav1.BootstrapFailedReason,
			Message: "step containerd: containerd config: access denied\nlog tail:\n...", LastTransitionTime: metav1.Now()}},
	}
	g.Expect(c.Status().Update(ctx, vcm)).To(Succeed())
	create(ctx, g, c, &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "ev-", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "VCenterMachine", Name: vcm.Name, Namespace: ns, UID: vcm.UID},
		Type:           corev1.EventTypeNormal, Reason: "Creating", Message: "Creating VM (task task-7)", Count: 1,
		LastTimestamp: metav1.NewTime(time.Now().Add(-time.Minute))})
	out = diagnose(g, kubeconfig, vcm.Name, "-n", ns)
	g.Expect(out).To(ContainSubstring("Machine diag/win-md-0-fail (Cluster win)"))
	g.Expect(out).To(ContainSubstring("VCenterMachine diag/win-md-0-fail-vc"))
	g.Expect(out).To(MatchRegexp(`VM:\s+vm-42`))
	g.Expect(out).To(MatchRegexp(`Addresses:\s+InternalIP 10.0.0.21`))
	g.Expect(out).To(MatchRegexp(`BootstrapSucceeded\s+False\s+Failed\s+\S+\s+step containerd: containerd config: access denied \[\.\.\.\]`))
	g.Expect(out).To(MatchRegexp(`Step:\s+containerd`))
	g.Expect(out).To(ContainSubstring("    2026-01-01T00:00:01Z [containerd] failed: access denied"))
	g.Expect(out).To(ContainSubstring(`no Node yet: the bootstrap script failed at step containerd: containerd config: access denied`))
	g.Expect(out).To(MatchRegexp(`Normal\s+Creating\s+VCenterMachine/win-md-0-fail-vc\s+Creating VM \(task task-7\)`))

	// 3. Joined: a HyperVMachine whose Node is Ready; remediation is switched off for it.
	joined := machine(ctx, g, c, ns, "win-md-0-ok", "HyperVMachine", ptr.To("win-md-0-ok-bootstrap"))
	joined.Annotations = map[string]string{clusterv1.MachineSkipRemediationAnnotation: ""}
	g.Expect(c.Update(ctx, joined)).To(Succeed())
	joined.Status.NodeRef = clusterv1.MachineNodeReference{Name: "win-md-0-ok"}
	joined.Status.Phase = string(clusterv1.MachinePhaseRunning)
	g.Expect(c.Status().Update(ctx, joined)).To(Succeed())
	hvm := &infrav1.HyperVMachine{ObjectMeta: metav1.ObjectMeta{Name: joined.Name, Namespace: ns},
		Spec: infrav1.HyperVMachineSpec{ParentDisk: `C:\golden\windows-2022.vhdx`, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}}}
	create(ctx, g, c, hvm)
	hvm.Status = infrav1.MachineStatus{Provisioning: infrav1.Provisioning{State: infrav1.StateProvisioned, Since: metav1.Now()},
		VM: infrav1.VMReference{ID: "3f1c", Host: "hv-01"}, Bootstrap: infrav1.BootstrapStatus{Step: "finish", State: "Succeeded"}}
	g.Expect(c.Status().Update(ctx, hvm)).To(Succeed())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-md-0-ok", Labels: map[string]string{corev1.LabelWindowsBuild: "10.0.20348"}},
		Spec: corev1.NodeSpec{ProviderID: "hyperv://hv-01/3f1c", Taints: []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}}}
	create(ctx, g, c, node)
	node.Status = corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastTransitionTime: metav1.Now()}}}
	g.Expect(c.Status().Update(ctx, node)).To(Succeed())
	out = diagnose(g, kubeconfig, "--namespace", ns, joined.Name)
	g.Expect(out).To(MatchRegexp(`Phase:\s+Running`))
	g.Expect(out).To(MatchRegexp(`Host:\s+hv-01`))
	g.Expect(out).To(MatchRegexp(`Ready:\s+True \(KubeletReady since `))
	g.Expect(out).To(MatchRegexp(`Kubelet:\s+v1.36.3`))
	g.Expect(out).To(MatchRegexp(`Taints:\s+os=windows:NoSchedule`))
	g.Expect(out).To(MatchRegexp(`Windows build:\s+10.0.20348`))
	g.Expect(out).NotTo(ContainSubstring("no Node yet"))
	g.Expect(out).To(ContainSubstring("MachineHealthCheck remediation is skipped for this Machine"))

	var buf bytes.Buffer
	g.Expect(run([]string{"diagnostics", "--kubeconfig", kubeconfig, "-n", ns, "nothing-here"}, &buf)).
		To(MatchError(ContainSubstring(`no Machine, VCenterMachine or HyperVMachine named "nothing-here" in namespace "diag"`)))
	g.Expect(run([]string{"diagnostics", "--kubeconfig", kubeconfig}, &buf)).To(MatchError(ContainSubstring("usage: render diagnostics")))
}

// TestDiagnosticsHelp: `render diagnostics -h` (before or after MACHINE) prints its own usage
// on stdout and exits 0; a wrong flag or a missing MACHINE is an error. No cluster is needed.
func TestDiagnosticsHelp(t *testing.T) {
	for _, args := range [][]string{{"diagnostics", "-h"}, {"diagnostics", "--help"}, {"diagnostics", "m", "-h"}} {
		g := NewWithT(t)
		var out bytes.Buffer
		err := run(args, &out)
		g.Expect(err).To(MatchError(flag.ErrHelp), "%q", args)
		g.Expect(exitStatus(err, io.Discard)).To(Equal(0))
		g.Expect(out.String()).To(HavePrefix("usage: render diagnostics [--kubeconfig FILE] [-n NAMESPACE] [--events N] MACHINE\n"))
		for _, f := range []string{"-kubeconfig string", "-n string", "-namespace string", "-events int"} {
			g.Expect(out.String()).To(ContainSubstring(f))
		}
	}
	g := NewWithT(t)
	var out bytes.Buffer
	g.Expect(run([]string{"diagnostics", "--nope"}, &out)).To(MatchError("flag provided but not defined: -nope (render diagnostics -h for usage)"))
	g.Expect(run([]string{"diagnostics"}, &out)).To(MatchError(ContainSubstring("usage: render diagnostics")))
	g.Expect(out.String()).To(BeEmpty())
}

// diagnose runs `render diagnostics --kubeconfig kubeconfig args...` and returns its output.
func diagnose(g Gomega, kubeconfig string, args ...string) string {
	var out bytes.Buffer
	g.Expect(run(append([]string{"diagnostics", "--kubeconfig", kubeconfig}, args...), &out)).To(Succeed())
	return out.String()
}

// machine creates a Machine of Cluster "win" whose infrastructure is kind/name (and bootstrap a
// WindowsConfig of the same name, or the data Secret given).
func machine(ctx context.Context, g Gomega, c client.Client, ns, name, kind string, dataSecret *string) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: clusterv1.MachineSpec{ClusterName: "win", Version: "v1.36.3",
			Bootstrap: clusterv1.Bootstrap{DataSecretName: dataSecret, ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "WindowsConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: name}}}
	if kind == "VCenterMachine" && dataSecret != nil {
		m.Spec.InfrastructureRef.Name = name + "-vc"
	}
	create(ctx, g, c, m)
	return m
}

func create(ctx context.Context, g Gomega, c client.Client, obj client.Object) {
	g.Expect(c.Create(ctx, obj)).To(Succeed())
}

// selfManaged starts an apiserver that is both the management cluster and the workload cluster of
// Cluster ns/win (its kubeconfig Secret points back at it), and returns its kubeconfig file and a
// client.
func selfManaged(t *testing.T, g Gomega, ns string) (string, client.Client) {
	env, err := envtest.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())
	c, err := client.New(env.Config, client.Options{Scheme: diagnostics.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	create(t.Context(), g, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	create(t.Context(), g, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "win-kubeconfig", Namespace: ns,
		Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}}, Data: map[string][]byte{"value": env.KubeConfig}})
	return kubeconfig, c
}

// TestNoKubeconfig: with no --kubeconfig, no KUBECONFIG and no ~/.kube/config, the commands that
// read the management cluster name the three ways to give one (client-go's own error names
// KUBERNETES_MASTER, which a reader cannot act on).
func TestNoKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	for _, args := range [][]string{{"diagnostics", "m"}, {"logs", "m"}, {"preflight", "--target", "ltsc2025", "c"}} {
		g := NewWithT(t)
		err := run(args, io.Discard)
		g.Expect(err).To(MatchError(errNoKubeconfig), "%q", args)
		g.Expect(err.Error()).NotTo(ContainSubstring("KUBERNETES_MASTER"))
	}
}
