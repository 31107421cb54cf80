package management_test

import (
	"context"
	"crypto/tls"
	"io"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/internal/test/vcsim/templates"
	"github.com/capwin/capwin/test/framework/harness/management"
	"github.com/capwin/capwin/test/framework/harness/workload"
)

// startVCSim runs govmomi's vcsim (VPX model) over TLS, as the machine reconciler suite does.
func startVCSim(t *testing.T) *simulator.Server {
	t.Helper()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	model.Service.TLS = new(tls.Config) // capwin verifies vCenter's certificate
	srv := model.Service.NewServer()
	t.Cleanup(func() { srv.Close(); model.Remove() })
	if err := templates.Mark(t.Context(), srv.URL, "/DC0/vm/DC0_H0_VM0"); err != nil {
		t.Fatal(err)
	}
	return srv
}

// fixture is one workload Cluster of the test: what a user creates (Cluster, VCenterCluster,
// identity Secret, TestControlPlane, templates, MachineDeployment).
type fixture struct {
	ns        string
	cluster   *clusterv1.Cluster
	vcCluster *infrav1.VCenterCluster
	md        *clusterv1.MachineDeployment
}

// newCluster creates the namespace, identity Secret, VCenterCluster, TestControlPlane and the
// Cluster that references both; CAPI adopts them (no owner references are set here).
func newCluster(ctx context.Context, t *testing.T, k8s client.Client, vcsim *simulator.Server) *fixture {
	t.Helper()
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "mgmt-"}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	f := &fixture{ns: ns.Name}
	pw, _ := vcsim.URL.User.Password()
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "vcenter-identity", Namespace: f.ns},
		Data:       map[string][]byte{"username": []byte(vcsim.URL.User.Username()), "password": []byte(pw)},
	})).To(Succeed())
	f.vcCluster = &infrav1.VCenterCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: f.ns},
		Spec: infrav1.VCenterClusterSpec{
			Server: "https://" + vcsim.URL.Host, Thumbprint: soap.ThumbprintSHA256(vcsim.Certificate()),
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-identity"}, Datacenter: "DC0",
		},
	}
	g.Expect(k8s.Create(ctx, f.vcCluster)).To(Succeed())
	g.Expect(k8s.Create(ctx, management.NewControlPlane(f.ns, "win-cp"))).To(Succeed())
	f.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: f.ns},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterCluster", Name: "win"},
			ControlPlaneRef:   management.ControlPlaneRef("win-cp"),
		},
	}
	g.Expect(k8s.Create(ctx, f.cluster)).To(Succeed())
	return f
}

// addWorkers creates a WindowsConfigTemplate, a VCenterMachineTemplate and a MachineDeployment
// of one replica without selector or labels (CAPI's defaulting webhook fills them).
func (f *fixture) addWorkers(ctx context.Context, t *testing.T, k8s client.Client) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, &bootstrapv1.WindowsConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "win-workers", Namespace: f.ns},
	})).To(Succeed())
	g.Expect(k8s.Create(ctx, &infrav1.VCenterMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "win-workers", Namespace: f.ns},
		Spec: infrav1.VCenterMachineTemplateSpec{Template: infrav1.VCenterMachineTemplateResource{Spec: infrav1.VCenterMachineSpec{
			Template: "DC0_H0_VM0", Placement: infrav1.Placement{ResourcePool: "/DC0/host/DC0_H0/Resources"}, CloneMode: infrav1.FullClone,
			NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 40, Network: []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}},
			OS: infrav1.OSWindows, PowerOffMode: infrav1.PowerOffHard,
		}}},
	})).To(Succeed())
	f.md = &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "win-workers", Namespace: f.ns},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: "win", Replicas: ptr.To[int32](1),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: "win", Version: "v1.36.3",
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "WindowsConfigTemplate", Name: "win-workers"}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterMachineTemplate", Name: "win-workers"},
			}},
		},
	}
	g.Expect(k8s.Create(ctx, f.md)).To(Succeed())
}

// condition returns the condition of type t (zero if absent).
func condition(conds []metav1.Condition, t string) metav1.Condition {
	for _, c := range conds {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// controller returns the kind/name of an object's controller owner ("" if none).
func controller(obj metav1.Object) string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return ref.Kind + "/" + ref.Name
	}
	return ""
}

// vmExists reports whether vcsim has a VM with the instance UUID.
func vmExists(ctx context.Context, g Gomega, vcsim *simulator.Server, uuid string) bool {
	c, err := vim25.NewClient(ctx, soap.NewClient(vcsim.URL, true))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(session.NewManager(c).Login(ctx, vcsim.URL.User)).To(Succeed())
	ref, err := object.NewSearchIndex(c).FindByUuid(ctx, nil, uuid, true, ptr.To(true))
	g.Expect(err).NotTo(HaveOccurred())
	return ref != nil
}

func logOutput() io.Writer {
	if os.Getenv("CAPWIN_TEST_DEBUG") != "" {
		return os.Stderr
	}
	return io.Discard
}

// startWorkload starts a workload cluster in the background; it stops when ctx ends.
func startWorkload(ctx context.Context, logDir string) <-chan func() (*workload.Cluster, error) {
	ch := make(chan func() (*workload.Cluster, error), 1)
	go func() {
		w, err := workload.Start(ctx, workload.Options{LogDir: logDir})
		ch <- func() (*workload.Cluster, error) { return w, err }
	}()
	return ch
}
