package move_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	clusterctllog "sigs.k8s.io/cluster-api/cmd/clusterctl/log"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/vcenter/session"
	infrasetup "github.com/capwin/capwin/infrastructure/setup"
	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/harness/management"
	"github.com/capwin/capwin/test/framework/vcsim"
)

const (
	workers     = "win"
	replicas    = 2
	image       = "ltsc2022"
	stepTimeout = 4 * time.Minute
)

// TestMove moves a running capwin Cluster (vCenter, 2 joined Windows workers) with
// `clusterctl move` from the harness's management cluster to a second one that sees the same
// vcsim and workload cluster, and checks that nothing on vSphere or in the workload cluster
// notices: the source pauses (capwin's reconcilers report Paused=True and make no vSphere call
// that changes anything), every object arrives in the target under the same name and resumes
// there (Paused=False), the VMs are the same VMs (same count, managed object references,
// instance and BIOS UUIDs, power state; no clone, reconfigure, power or destroy call from
// either manager), the Machines keep their providerIDs and Nodes, no bootstrap token is issued
// and no bootstrap data re-rendered; finally the target deletes the Cluster and vcsim keeps no VM.
func TestMove(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: three apiservers, scheduler, controller-manager, vcsim")
	}
	g := NewWithT(t)
	ctx := t.Context()
	begin := time.Now()
	p := func(format string, args ...any) {
		t.Helper()
		t.Logf("%6.1fs "+format, append([]any{time.Since(begin).Seconds()}, args...)...)
	}
	logDir, log := logs(t)

	// 1. Source: the harness (vcsim, management cluster, workload cluster, guests) with a Cluster
	//    of 2 Windows workers, joined.
	srcCalls, dstCalls := &vcsim.Calls{}, &vcsim.Calls{}
	infra := func(calls *vcsim.Calls) infrasetup.Options {
		return infrasetup.Options{PollInterval: time.Second, TaskPollInterval: 200 * time.Millisecond,
			Sessions: &session.Sessions{WrapTransport: calls.Wrap}}
	}
	h, err := harness.Start(ctx, harness.Options{Provider: harness.VCenter, LogDir: logDir, Log: log,
		Heartbeat: 5 * time.Second, JoinTimeout: time.Minute, Infrastructure: infra(srcCalls)})
	if h != nil {
		t.Cleanup(func() {
			if err := h.Stop(); err != nil {
				t.Log("stop harness:", err)
			}
		})
	}
	g.Expect(err).NotTo(HaveOccurred())
	src := h.Management
	srcDirect := directClient(t, src)
	p("source management cluster, workload cluster and vcsim started")

	cfgPath, err := writeClusterctlConfig(logDir)
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := config.New(ctx, cfgPath)
	g.Expect(err).NotTo(HaveOccurred())
	srcKubeconfig := filepath.Join(logDir, "source.kubeconfig")
	err = src.Env.WriteAdminKubeconfig("clusterctl-source", srcKubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(clusterctlInit(ctx, srcKubeconfig, cfg, srcDirect)).To(Succeed(), "clusterctl init of the source")

	g.Expect(h.CreateCluster(ctx)).To(Succeed())
	g.Expect(h.CreateWorkers(ctx, harness.Workers{Name: workers, Image: image, Replicas: replicas})).To(Succeed())
	_, err = h.WaitWorkers(ctx, "create", replicas, image, stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	p("source: %d Windows workers Running with Nodes", replicas)

	// 2. Target: a second management cluster with CAPI's and capwin's controllers; it reaches
	//    vcsim and the workload cluster through what moves (VCenterCluster + identity Secret,
	//    <cluster>-kubeconfig).
	dst, err := management.Start(ctx, management.Options{Infrastructure: infra(dstCalls)})
	if dst != nil {
		t.Cleanup(func() { // runs before the harness's Stop, which stops the workload cluster
			if err := dst.Stop(); err != nil {
				t.Log("stop target management cluster:", err)
			}
		})
	}
	g.Expect(err).NotTo(HaveOccurred())
	dstDirect := directClient(t, dst)
	dstKubeconfig := filepath.Join(logDir, "target.kubeconfig")
	err = dst.Env.WriteAdminKubeconfig("clusterctl-target", dstKubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(clusterctlInit(ctx, dstKubeconfig, cfg, dstDirect)).To(Succeed(), "clusterctl init of the target")
	for name, c := range map[string]crclient.Client{"source": srcDirect, "target": dstDirect} {
		inv := &clusterctlv1.ProviderList{}
		g.Expect(c.List(ctx, inv)).To(Succeed())
		g.Expect(inv.Items).To(ConsistOf(HaveField("Name", "cluster-api"), HaveField("Name", "bootstrap-windows"),
			HaveField("Name", "control-plane-harness"), HaveField("Name", "infrastructure-capwin")), "%s inventory", name)
	}
	p("target management cluster started; both prepared as clusterctl init leaves them (inventory: 4 providers)")

	// 3. A quiet source: every Machine has its Node, every token is revoked, the user data is
	//    cleared from the VMs. Record what must not change.
	v, err := loginVSphere(ctx, h.VSphere.Server)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { v.logout(context.Background()) })
	var vmsBefore map[string]vm
	g.Eventually(func(g Gomega) {
		tokens, err := bootstrapTokens(ctx, h.WorkloadClient)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(tokens).To(BeEmpty(), "bootstrap tokens revoked after the joins")
		vmsBefore, err = v.vms(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(vmsBefore).To(HaveLen(replicas))
		for _, x := range vmsBefore {
			g.Expect(x.UserData).To(BeFalse(), "user data cleared from %s", x)
			g.Expect(x.Power).To(Equal("poweredOn"), "%s", x)
		}
		cfgs := &bootstrapv1.WindowsConfigList{}
		g.Expect(srcDirect.List(ctx, cfgs, crclient.InNamespace(harness.Namespace))).To(Succeed())
		for _, c := range cfgs.Items {
			g.Expect(c.Status.Initialization.DataSecretCreated).To(HaveValue(BeTrue()), c.Name)
		}
	}, stepTimeout, 250*time.Millisecond).Should(Succeed(), "source quiet before the move")
	machinesBefore := machines(ctx, g, srcDirect)
	g.Expect(machinesBefore).To(HaveLen(replicas))
	objectsBefore, err := inventory(ctx, srcDirect)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objectsBefore["Secret"]).To(ContainElements("vcenter-identity", harness.ClusterName+"-kubeconfig", harness.ClusterName+"-ca"))
	g.Expect(objectsBefore["WindowsConfig"]).To(HaveLen(replicas))
	dataBefore, err := dataSecrets(ctx, srcDirect, objectsBefore["WindowsConfig"])
	g.Expect(err).NotTo(HaveOccurred())
	for name, d := range dataBefore {
		g.Expect(d.Revoked).NotTo(BeEmpty(), "data Secret %s records its token as revoked", name)
	}
	booted := h.Guests.Booted()
	for _, m := range machinesBefore {
		p("  Machine %s providerID=%s node=%s", m.Name, m.Spec.ProviderID, m.Status.NodeRef.Name)
	}
	for _, x := range vmsBefore {
		p("  VM %s", x)
	}
	mon := startMonitor(ctx, v, h.WorkloadClient, vmsBefore, 500*time.Millisecond)
	srcCallsAtMove := srcCalls.Snapshot()

	// 4. Move. The VCenterCluster carries clusterctl's block-move annotation, so clusterctl pauses
	//    the source Cluster and then waits: the window in which capwin's reconcilers must stop.
	setAnnotation(ctx, g, srcDirect, &infrav1.VCenterCluster{}, harness.ClusterName, clusterctlv1.BlockMoveAnnotation, ptr.To(""))
	cc, err := clusterctl.New(ctx, cfgPath)
	g.Expect(err).NotTo(HaveOccurred())
	moveCtx, cancelMove := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelMove()
	moveDone := make(chan error, 1)
	moveBegin := time.Now()
	go func() {
		moveDone <- cc.Move(moveCtx, clusterctl.MoveOptions{
			FromKubeconfig: clusterctl.Kubeconfig{Path: srcKubeconfig},
			ToKubeconfig:   clusterctl.Kubeconfig{Path: dstKubeconfig},
			Namespace:      harness.Namespace,
		})
	}()
	g.Eventually(func(g Gomega) {
		select {
		case err := <-moveDone:
			moveDone <- err
			g.Expect(err).NotTo(HaveOccurred(), "move ended while it should wait for the block-move annotation")
		default:
		}
		c := &clusterv1.Cluster{}
		g.Expect(srcDirect.Get(ctx, crclient.ObjectKey{Namespace: harness.Namespace, Name: harness.ClusterName}, c)).To(Succeed())
		g.Expect(c.Spec.Paused).To(HaveValue(BeTrue()), "clusterctl pauses the source Cluster")
		g.Expect(conditionStatus(c.Status.Conditions, clusterv1.PausedCondition)).To(Equal(metav1.ConditionTrue), "CAPI reports the Cluster paused")
		g.Expect(pausedConditions(ctx, g, srcDirect)).To(HaveEach(Equal(metav1.ConditionTrue)), "capwin's objects report Paused=True")
	}, time.Minute, 100*time.Millisecond).Should(Succeed(), "source paused while the move waits")
	p("move: source Cluster paused; VCenterCluster, VCenterMachines and WindowsConfigs report Paused=True")
	time.Sleep(2 * time.Second) // the paused source is left alone for a while: nothing may happen
	setAnnotation(ctx, g, srcDirect, &infrav1.VCenterCluster{}, harness.ClusterName, clusterctlv1.BlockMoveAnnotation, nil)
	select {
	case err = <-moveDone:
	case <-moveCtx.Done():
		err = fmt.Errorf("clusterctl move did not finish: %w", moveCtx.Err())
	}
	g.Expect(err).NotTo(HaveOccurred(), "clusterctl move (log: %s)", filepath.Join(logDir, "clusterctl.log"))
	srcMoveCalls := callsSince(srcCallsAtMove, srcCalls.Snapshot())
	p("move: done in %.1fs; source vSphere calls during the move: %v", time.Since(moveBegin).Seconds(), srcMoveCalls)
	g.Expect(mutatingCalls(srcMoveCalls)).To(BeEmpty(), "the paused source changed nothing on vSphere")

	// 5a. Objects: gone from the source, all in the target under the same names.
	objectsSrc, err := inventory(ctx, srcDirect)
	g.Expect(err).NotTo(HaveOccurred())
	for kind, names := range objectsSrc {
		g.Expect(names).To(BeEmpty(), "source %s left after the move", kind)
	}
	objectsDst, err := inventory(ctx, dstDirect)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objectsDst).To(Equal(objectsBefore), "the target has every object of the Cluster, under the same names")
	p("objects: source namespace empty; target has %s", summary(objectsDst))

	// 5b. The target resumes: Cluster unpaused, capwin's objects Paused=False and Ready again,
	//     the same Machines Running on the same VMs and Nodes.
	ht := *h // the harness's steps, acting on the target (never Stop this copy)
	ht.Management = dst
	g.Eventually(func(g Gomega) {
		c := &clusterv1.Cluster{}
		g.Expect(dstDirect.Get(ctx, crclient.ObjectKey{Namespace: harness.Namespace, Name: harness.ClusterName}, c)).To(Succeed())
		g.Expect(ptr.Deref(c.Spec.Paused, false)).To(BeFalse(), "target Cluster spec.paused")
		g.Expect(conditionStatus(c.Status.Conditions, clusterv1.PausedCondition)).To(Equal(metav1.ConditionFalse), "target Cluster Paused condition")
		g.Expect(c.Status.Initialization.InfrastructureProvisioned).To(HaveValue(BeTrue()))
		g.Expect(c.Status.Initialization.ControlPlaneInitialized).To(HaveValue(BeTrue()))
		g.Expect(pausedConditions(ctx, g, dstDirect)).To(HaveEach(Equal(metav1.ConditionFalse)), "capwin's objects report Paused=False")
		vms := &infrav1.VCenterMachineList{}
		g.Expect(dstDirect.List(ctx, vms, crclient.InNamespace(harness.Namespace))).To(Succeed())
		for _, m := range vms.Items {
			g.Expect(m.Status.Initialization.Provisioned).To(HaveValue(BeTrue()), "VCenterMachine %s provisioned", m.Name)
			g.Expect(conditionStatus(m.Status.Conditions, infrav1.ReadyCondition)).To(Equal(metav1.ConditionTrue), "VCenterMachine %s Ready: %v", m.Name, m.Status.Conditions)
			x, ok := vmsBefore[m.Status.VM.ID]
			g.Expect(ok).To(BeTrue(), "VCenterMachine %s found VM %q, one of the VMs before the move", m.Name, m.Status.VM.ID)
			g.Expect(m.Status.VM.InstanceUUID).To(Equal(x.InstanceUUID))
			g.Expect(m.Spec.ProviderID).To(Equal("vsphere://" + x.BIOSUUID))
		}
		cfgs := &bootstrapv1.WindowsConfigList{}
		g.Expect(dstDirect.List(ctx, cfgs, crclient.InNamespace(harness.Namespace))).To(Succeed())
		for _, c := range cfgs.Items {
			g.Expect(c.Status.Initialization.DataSecretCreated).To(HaveValue(BeTrue()), "WindowsConfig %s", c.Name)
			g.Expect(c.Status.DataSecretName).To(Equal(c.Name))
		}
		after := machines(ctx, g, dstDirect)
		g.Expect(after).To(HaveLen(replicas))
		for _, m := range machinesBefore {
			a, ok := after[m.Name]
			g.Expect(ok).To(BeTrue(), "Machine %s in the target", m.Name)
			g.Expect(a.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s phase", m.Name)
			g.Expect(a.Spec.ProviderID).To(Equal(m.Spec.ProviderID), "Machine %s providerID", m.Name)
			g.Expect(a.Status.NodeRef.Name).To(Equal(m.Status.NodeRef.Name), "Machine %s nodeRef", m.Name)
		}
	}, stepTimeout, 250*time.Millisecond).Should(Succeed(), "target resumes the moved Cluster\n%s", ht.Describe(context.WithoutCancel(ctx)))
	_, err = ht.WaitWorkers(ctx, "after move", replicas, image, stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	p("target: Cluster unpaused, capwin's objects Paused=False and Ready, Machines Running with the same providerIDs and Nodes")

	// 5c. Nothing happened on vSphere or in the workload cluster. Watch a little longer: a
	//     token refresh or a VM re-create would come with the first reconciles after the move.
	time.Sleep(5 * time.Second)
	vmChanges, tokens, samples, errs, lastErr := mon.result()
	p("monitor: %d samples of vcsim and the workload cluster (%d failed, last error %v)", samples, errs, lastErr)
	g.Expect(samples).To(BeNumerically(">", 10), "the monitor observed the move")
	g.Expect(vmChanges).To(BeEmpty(), "no VM created, deleted, re-created or power-cycled during or after the move")
	g.Expect(tokens).To(BeEmpty(), "no bootstrap token issued for the joined Machines during or after the move")
	vmsAfter, err := v.vms(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(vmsAfter).To(Equal(vmsBefore), "the same VMs (count, references, instance and BIOS UUIDs, power)")
	dataAfter, err := dataSecrets(ctx, dstDirect, objectsBefore["WindowsConfig"])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dataAfter).To(Equal(dataBefore), "the bootstrap data Secrets were not re-rendered (same data, same revoked token)")
	g.Expect(h.Guests.Booted()).To(Equal(booted), "no guest booted again")
	dstBeforeDelete := dstCalls.Snapshot()
	g.Expect(mutatingCalls(dstBeforeDelete)).To(BeEmpty(), "the target only read vSphere for the moved machines")
	p("vSphere: the same %d VMs; target's calls so far (all reads): %v", len(vmsAfter), dstBeforeDelete)

	// 6. Delete the Cluster from the target: its VMs go, nothing leaks.
	s, err := ht.DeleteCluster(ctx, stepTimeout, p)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.VMs + s.Tokens + s.Machines).To(BeZero())
	left, err := v.vms(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeEmpty(), "VMs left on vcsim after the Cluster's deletion")
	deleteCalls := callsSince(dstBeforeDelete, dstCalls.Snapshot())
	g.Expect(deleteCalls).To(HaveKeyWithValue("Destroy_Task", replicas), "the target destroyed the moved VMs")
	g.Expect(dstCalls.Snapshot()).NotTo(HaveKey("CloneVM_Task"), "the target never cloned a VM")
	g.Expect(mutatingCalls(callsSince(srcCallsAtMove, srcCalls.Snapshot()))).To(BeEmpty(), "the source never touched vSphere again")
	p("delete from the target: 0 VMs, 0 Machines, 0 tokens left; target's mutating calls: %v", mutatingCalls(deleteCalls))
}

// pausedConditions returns the Paused condition of the moved capwin objects, by kind/name.
func pausedConditions(ctx context.Context, g Gomega, c crclient.Client) map[string]metav1.ConditionStatus {
	out := map[string]metav1.ConditionStatus{}
	vcs := &infrav1.VCenterClusterList{}
	g.Expect(c.List(ctx, vcs, crclient.InNamespace(harness.Namespace))).To(Succeed())
	for _, o := range vcs.Items {
		out["VCenterCluster/"+o.Name] = conditionStatus(o.Status.Conditions, clusterv1.PausedCondition)
	}
	vms := &infrav1.VCenterMachineList{}
	g.Expect(c.List(ctx, vms, crclient.InNamespace(harness.Namespace))).To(Succeed())
	for _, o := range vms.Items {
		out["VCenterMachine/"+o.Name] = conditionStatus(o.Status.Conditions, clusterv1.PausedCondition)
	}
	cfgs := &bootstrapv1.WindowsConfigList{}
	g.Expect(c.List(ctx, cfgs, crclient.InNamespace(harness.Namespace))).To(Succeed())
	for _, o := range cfgs.Items {
		out["WindowsConfig/"+o.Name] = conditionStatus(o.Status.Conditions, clusterv1.PausedCondition)
	}
	g.Expect(out).To(HaveLen(1+2*replicas), "capwin objects: %v", out)
	return out
}

// machines returns the Cluster's Machines by name.
func machines(ctx context.Context, g Gomega, c crclient.Client) map[string]clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(c.List(ctx, list, crclient.InNamespace(harness.Namespace))).To(Succeed())
	out := map[string]clusterv1.Machine{}
	for _, m := range list.Items {
		out[m.Name] = m
	}
	return out
}

// setAnnotation sets (value non-nil) or removes an annotation of a namespaced object.
func setAnnotation(ctx context.Context, g Gomega, c crclient.Client, obj crclient.Object, name, key string, value *string) {
	g.Expect(c.Get(ctx, crclient.ObjectKey{Namespace: harness.Namespace, Name: name}, obj)).To(Succeed())
	before := obj.DeepCopyObject().(crclient.Object)
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if value != nil {
		a[key] = *value
	} else {
		delete(a, key)
	}
	obj.SetAnnotations(a)
	g.Expect(c.Patch(ctx, obj, crclient.MergeFrom(before))).To(Succeed())
}

// directClient reads a management cluster without a cache: assertions see what the apiserver has.
func directClient(t *testing.T, m *management.Management) crclient.Client {
	c, err := crclient.New(m.Env.Config, crclient.Options{Scheme: clusterctlScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clusterctlScheme is the management scheme plus clusterctl's inventory types.
func clusterctlScheme() *runtime.Scheme {
	s := management.Scheme()
	if err := clusterctlv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// summary is "Kind: n" for the kinds of an inventory.
func summary(objs map[string][]string) string {
	var b strings.Builder
	for _, gvk := range movedKinds {
		fmt.Fprintf(&b, "%s %d, ", gvk.Kind, len(objs[gvk.Kind]))
	}
	return strings.TrimSuffix(b.String(), ", ")
}

// logs returns the directory for every log of the test (controllers, clusterctl, the workload
// cluster's components) and the harness's logger. It is kept when the test fails
// (CAPWIN_E2E_LOGS=<dir> keeps it always) and removed otherwise.
func logs(t *testing.T) (string, logr.Logger) {
	dir, keep := os.Getenv("CAPWIN_E2E_LOGS"), true
	var err error
	if dir != "" {
		dir = filepath.Join(dir, t.Name())
		err = os.MkdirAll(dir, 0o755)
	} else {
		dir, err = os.MkdirTemp("", "capwin-move-")
		keep = false
	}
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "controllers.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out io.Writer = f
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		out = io.MultiWriter(f, os.Stderr)
	}
	log := zap.New(zap.WriteTo(out))
	ctrl.SetLogger(log)
	cf, err := os.Create(filepath.Join(dir, "clusterctl.log"))
	if err != nil {
		t.Fatal(err)
	}
	clusterctllog.SetLogger(funcr.New(func(prefix, args string) {
		_, _ = fmt.Fprintln(cf, time.Now().Format("15:04:05.000"), prefix, args) // a log sink has nowhere to report a failed write
	}, funcr.Options{Verbosity: 5}))
	t.Cleanup(func() {
		_ = f.Close()
		_ = cf.Close()
		if t.Failed() || keep {
			t.Logf("logs of controllers, clusterctl and the workload cluster: %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir, log
}
