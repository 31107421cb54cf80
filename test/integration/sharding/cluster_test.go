package sharding

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/harness/management"
)

// createCluster creates the Cluster "win" of a shard in namespace shard-<shard>, with one Windows
// worker (MachineDeployment shard-<shard>-workers, so its VM's name says its shard). Every
// object a provider reconciles carries cluster.x-k8s.io/watch-filter=<shard>; the
// MachineDeployment's template labels pass it on to the Machine, WindowsConfig and
// VCenterMachine. All clusters share the harness's workload apiserver.
func createCluster(ctx context.Context, h *harness.Harness, shard string) error {
	ns, c := "shard-"+shard, h.Management.Client
	labels := map[string]string{clusterv1.WatchLabel: shard}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	u := h.VSphere.Server.URL
	pw, _ := u.User.Password()
	img := harness.Images["ltsc2022"]
	cluster := &clusterv1.Cluster{ObjectMeta: meta("win"), Spec: clusterv1.ClusterSpec{
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterCluster", Name: "win"},
		ControlPlaneRef:   management.ControlPlaneRef("win-cp"),
	}}
	workers := ns + "-workers"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vcenter-identity", Namespace: ns},
			Data: map[string][]byte{"username": []byte(u.User.Username()), "password": []byte(pw)}},
		&infrav1.VCenterCluster{ObjectMeta: meta("win"), Spec: infrav1.VCenterClusterSpec{
			Server: "https://" + u.Host, Thumbprint: h.VSphere.Thumbprint(), Datacenter: h.VSphere.Datacenter,
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-identity"},
		}},
		management.NewControlPlane(ns, "win-cp"),
		cluster,
		&bootstrapv1.WindowsConfigTemplate{ObjectMeta: meta("workers")},
		&infrav1.VCenterMachineTemplate{ObjectMeta: meta("workers"), Spec: infrav1.VCenterMachineTemplateSpec{
			Template: infrav1.VCenterMachineTemplateResource{Spec: infrav1.VCenterMachineSpec{
				Template: img.VSphereTemplate, Placement: infrav1.Placement{ResourcePool: h.VSphere.ResourcePool},
				CloneMode: infrav1.FullClone, NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 40, OS: infrav1.OSWindows,
				Network:      []infrav1.NetworkDevice{{NetworkName: h.VSphere.Network, DHCP4: true}},
				PowerOffMode: infrav1.PowerOffHard,
			}},
		}},
		&clusterv1.MachineDeployment{ObjectMeta: meta(workers), Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: "win", Replicas: ptr.To[int32](1),
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: labels},
				Spec: clusterv1.MachineSpec{
					ClusterName: "win", Version: harness.KubernetesVersion,
					Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: bootstrapv1.GroupVersion.Group, Kind: "WindowsConfigTemplate", Name: "workers"}},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterMachineTemplate", Name: "workers"},
				},
			},
		}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	if err := h.Management.StoreWorkloadSecrets(ctx, cluster, h.Workload); err != nil {
		return err
	}
	return h.Management.SetControlPlaneEndpoint(ctx, client.ObjectKey{Namespace: ns, Name: "win-cp"}, h.Workload.Endpoint)
}

// vmsOf counts the VMs of a shard's workers.
func vmsOf(ctx context.Context, h *harness.Harness, shard string) (int, error) {
	names, err := h.VSphere.VMNames(ctx)
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, "shard-"+shard+"-workers-") {
			n++
		}
	}
	return n, err
}
