//go:build e2e

package kind

import (
	"bytes"
	"context"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"

	"github.com/capwin/capwin/internal/diagnostics"
	"github.com/capwin/capwin/internal/nodelogs"
)

const (
	// brokenImageAnnotation on a Machine: its guest's cloudbase-init cannot run the user data
	// (sim.BrokenImageAnnotation).
	brokenImageAnnotation = "e2e.capwin.io/broken-image"
	// guestAdmin is the Secret of the guests' administrator login that render logs names
	// (--guest-credentials), as docs/node-logs.md tells operators to create it.
	guestAdmin         = "guest-admin"
	guestAdminPassword = "e2e-Guest-pw1"
)

// checkRenderLogs diagnoses two Windows machines from the management cluster with render logs'
// one command (nodelogs.Gather), as docs/node-logs.md shows: the joined Machines of the Windows
// MachineDeployment, and a Machine whose image is broken and that never joins. The suite's
// workstation cannot read the workload cluster through its kubeconfig (the endpoint is a ClusterIP
// of the management cluster), so both are collected through the hypervisor's guest channel (VMware Tools' guest operations on vcsim,
// PowerShell Direct over capwin's WinRM client on the simulated Hyper-V hosts), by the
// infrastructure manager in the cluster. Neither archive holds the guest's password.
func checkRenderLogs(ctx context.Context, proxy framework.ClusterProxy, namespace, clusterName string) {
	mgmt := proxy.GetClient()
	c, err := client.New(proxy.GetRESTConfig(), client.Options{Scheme: diagnostics.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	Expect(ensureGuestAdmin(ctx, c, namespace)).To(Succeed())

	md := windowsMachineDeployment(ctx, mgmt, namespace, clusterName)
	files, res := renderLogs(ctx, c, nodelogs.Target{Kind: nodelogs.MachineDeployment, Namespace: namespace, Name: md.Name})
	Expect(res.Machines).To(HaveLen(int(ptrValue(md.Spec.Replicas))))
	for _, m := range res.Machines {
		Expect(files[m.Name+"/story.txt"]).To(ContainSubstring(m.Name))
		Expect(files[m.Name+"/guest/files/C/var/log/capwin/bootstrap.log"]).To(ContainSubstring("[finish] Succeeded"), "Machine %s: %v", m.Name, m.Notes)
		Expect(files[m.Name+"/guest/files/C/var/log/kubelet/kubelet.log"]).To(ContainSubstring("Successfully registered node"), "Machine %s", m.Name)
		Expect(files[m.Name+"/guest/state/hnsdiag.txt"]).To(ContainSubstring("Overlay"), "Machine %s", m.Name)
	}

	broken := brokenMachine(ctx, mgmt, md)
	files, res = renderLogs(ctx, c, nodelogs.Target{Kind: nodelogs.Machine, Namespace: namespace, Name: broken.Name})
	Expect(res.Machines).To(HaveLen(1))
	Expect(files[broken.Name+"/notes.txt"]).To(ContainSubstring("no node logs: the Machine has no Node"))
	Expect(files[broken.Name+"/guest/files/C/Program Files/Cloudbase Solutions/Cloudbase-Init/log/cloudbase-init.log"]).
		To(ContainSubstring("Executing user data failed"), "notes: %v", res.Machines[0].Notes)
	Expect(files[broken.Name+"/guest/events/Application.json"]).To(ContainSubstring("cloudbase-init"))

	Expect(mgmt.Delete(ctx, &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: broken.Labels[clusterv1.MachineDeploymentNameLabel]}})).To(Succeed())
	Eventually(func() bool {
		err := mgmt.Get(ctx, client.ObjectKeyFromObject(broken), &clusterv1.Machine{})
		return err != nil && client.IgnoreNotFound(err) == nil
	}, "5m", "5s").Should(BeTrue(), "Machine %s deleted", klog.KObj(broken))
}

// renderLogs is render logs for t with the guests' login; it returns the archive's files, and
// fails when any of them holds the guest's password.
func renderLogs(ctx context.Context, c client.Client, t nodelogs.Target) (map[string]string, *nodelogs.Result) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var buf bytes.Buffer
	res, err := nodelogs.Gather(ctx, c, t, nodelogs.Options{GuestCredentials: guestAdmin, GuestTimeout: 3 * time.Minute}, &buf)
	Expect(err).NotTo(HaveOccurred(), "render logs of %s %s/%s", t.Kind, t.Namespace, t.Name)
	files, err := nodelogs.ReadArchive(&buf)
	Expect(err).NotTo(HaveOccurred())
	for name, text := range files {
		Expect(strings.Contains(text, guestAdminPassword)).To(BeFalse(), "%s holds the guest's password", name)
	}
	return files, res
}

// brokenMachine adds a MachineDeployment of one Machine like md's on a broken image, and returns
// that Machine once its guest reported an address (the VM runs; its node never joins).
func brokenMachine(ctx context.Context, mgmt client.Client, md *clusterv1.MachineDeployment) *clusterv1.Machine {
	b := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: md.Namespace, Name: md.Name + "-broken", Labels: map[string]string{clusterv1.ClusterNameLabel: md.Spec.ClusterName}},
		Spec:       clusterv1.MachineDeploymentSpec{ClusterName: md.Spec.ClusterName, Replicas: ptr.To[int32](1), Template: *md.Spec.Template.DeepCopy()},
	}
	b.Spec.Template.Labels = map[string]string{clusterv1.ClusterNameLabel: md.Spec.ClusterName}
	b.Spec.Template.Annotations = map[string]string{brokenImageAnnotation: ""}
	Expect(mgmt.Create(ctx, b)).To(Succeed())
	var m *clusterv1.Machine
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(mgmt.List(ctx, list, client.InNamespace(md.Namespace), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: b.Name})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(1))
		m = &list.Items[0]
		g.Expect(m.Status.Addresses).NotTo(BeEmpty(), "the guest of Machine %s reported its address", klog.KObj(m))
	}, "5m", "5s").Should(Succeed())
	return m
}
