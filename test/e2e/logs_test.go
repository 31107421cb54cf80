package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/nodelogs"
	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// checkJoinedLogs: render logs of MachineDeployment md gathers, for each of its joined Machines,
// the story, the Node and the node's logs through Node Log Query: the bootstrap log to its last
// step and the kubelet's log kept by kube-log-runner. Nothing in the archive is a credential.
func checkJoinedLogs(t *testing.T, h *harness.Harness, md string, machines int) {
	t.Helper()
	g := NewWithT(t)
	_, res, files, err := h.GatherLogs(t.Context(), nodelogs.MachineDeployment, md)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Machines).To(HaveLen(machines))
	for _, m := range res.Machines {
		g.Expect(m.Node).NotTo(BeEmpty(), "%s: %v", m.Name, m.Notes)
		g.Expect(m.Notes).To(BeEmpty(), m.Name)
		g.Expect(files[m.Name+"/story.txt"]).To(ContainSubstring(m.Name))
		g.Expect(files[m.Name+"/node.yaml"]).To(ContainSubstring("name: " + m.Node))
		g.Expect(files[m.Name+"/node/capwin/bootstrap.log"]).To(ContainSubstring("[finish]"))
		g.Expect(files[m.Name+"/node/kubelet/kubelet.log"]).To(ContainSubstring(`"Successfully registered node" node="` + m.Node + `"`))
		g.Expect(files[m.Name+"/node/containerd/containerd.log"]).To(ContainSubstring("containerd successfully booted"))
	}
	g.Expect(files["README.txt"]).To(ContainSubstring("MachineDeployment " + harness.Namespace + "/" + md))
}

// checkNeverJoinedLogs: a Machine whose guest never runs its bootstrap (a broken image) has no
// Node; render logs still gathers its story (the VM, its address, why there is no Node), says in
// notes.txt why there are no node logs, and has the infrastructure manager collect in the guest
// through the hypervisor's guest channel with the images' guest login: cloudbase-init's log that
// names the failure, the event logs, HNS state. The request is withdrawn, the answer stays in the
// machine's node logs Secret. The Machine is removed afterwards.
func checkNeverJoinedLogs(t *testing.T, h *harness.Harness, image string) {
	t.Helper()
	g := NewWithT(t)
	ctx := t.Context()
	const md = "silent"
	var once sync.Once
	h.Guests.SetFaults(func(vm string) guest.Faults {
		var f guest.Faults
		if strings.HasPrefix(vm, md+"-") {
			once.Do(func() { f.NeverJoin = true })
		}
		return f
	})
	defer h.Guests.SetFaults(nil)
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: md, Image: image, Replicas: 1})).To(Succeed())
	g.Eventually(func(g Gomega) {
		ms := machinesOf(t, h, md)
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Status.Addresses).NotTo(BeEmpty(), "the guest reported its address")
	}, stepTimeout, time.Second).Should(Succeed())
	_, res, files, err := h.GatherLogs(ctx, nodelogs.MachineDeployment, md)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Machines).To(HaveLen(1))
	m := res.Machines[0]
	g.Expect(m.Node).To(BeEmpty())
	g.Expect(files[m.Name+"/story.txt"]).To(ContainSubstring(m.Name))
	g.Expect(files[m.Name+"/notes.txt"]).To(ContainSubstring("no node logs: the Machine has no Node"))
	g.Expect(files[m.Name+"/notes.txt"]).NotTo(ContainSubstring("no guest logs"))
	cloudbaseInit := m.Name + "/guest/files/C/Program Files/Cloudbase Solutions/Cloudbase-Init/log/cloudbase-init.log"
	g.Expect(files[cloudbaseInit]).To(ContainSubstring("Executing user data failed"))
	g.Expect(files[m.Name+"/guest/events/Application.json"]).To(ContainSubstring("cloudbase-init"))
	g.Expect(files[m.Name+"/guest/events/System.json"]).To(ContainSubstring("6005"))
	g.Expect(files[m.Name+"/guest/state/hnsdiag.txt"]).To(ContainSubstring("nat"))
	g.Expect(files[m.Name+"/guest/collect.log"]).To(ContainSubstring("collecting on"))
	checkLogRequestAnswered(ctx, g, h, m.Name)
	g.Expect(h.ScaleWorkers(ctx, md, 0)).To(Succeed())
	g.Eventually(func() []clusterv1.Machine { return machinesOf(t, h, md) }, stepTimeout, time.Second).Should(BeEmpty())
}

// checkLogRequestAnswered: the Machine's infrastructure machine carries no log request any more,
// and its node logs Secret (owned by it, so it goes with the machine) holds the answer.
func checkLogRequestAnswered(ctx context.Context, g Gomega, h *harness.Harness, machine string) {
	m := &clusterv1.Machine{}
	g.Expect(h.Management.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: machine}, m)).To(Succeed())
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(infrav1.GroupVersion.WithKind(m.Spec.InfrastructureRef.Kind))
	g.Expect(h.Management.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: m.Spec.InfrastructureRef.Name}, infra)).To(Succeed())
	g.Expect(infra.GetAnnotations()).NotTo(HaveKey(infrav1.CollectLogsAnnotation))
	secret := &corev1.Secret{}
	g.Expect(h.Management.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: infrav1.NodeLogsSecretName(infra.GetName())}, secret)).To(Succeed())
	g.Expect(string(secret.Type)).To(Equal(infrav1.NodeLogsSecretType))
	g.Expect(secret.OwnerReferences).To(ContainElement(HaveField("UID", infra.GetUID())))
	g.Expect(secret.Data).To(HaveKey(infrav1.NodeLogsArchiveKey))
}

// keepLogsOfFailure writes render logs of the harness's Cluster next to the test's logs when the
// test failed (CAPWIN_E2E_LOGS, else the temporary folder), so that the failure can be read later.
func keepLogsOfFailure(ctx context.Context, t *testing.T, h *harness.Harness, logDir string) {
	if !t.Failed() {
		return
	}
	if logDir == "" {
		logDir = filepath.Join(os.TempDir(), "capwin-e2e-logs", strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			t.Log("logs of the failure:", err)
			return
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	archive, _, _, err := h.GatherLogs(ctx, nodelogs.Cluster, harness.ClusterName)
	if err != nil && archive == nil {
		t.Log("logs of the failure:", err)
		return
	}
	path := filepath.Join(logDir, "capwin-logs.tar.gz")
	if err := os.WriteFile(path, archive, 0o644); err != nil {
		t.Log("logs of the failure:", err)
		return
	}
	t.Log("logs of the failure (render logs --cluster " + harness.ClusterName + "): " + path)
}
