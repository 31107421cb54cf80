package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/benchutil"
)

const ns = "bench"

// workload creates one cluster with n Windows machines and plays their guests.
type workload struct {
	k8s        client.Client
	kubeconfig []byte
	sim        *vcsimProcess
	n          int
	// progress counts the VCenterMachines that exist and those provisioned.
	progress func(context.Context) (live, provisioned int, err error)
}

func (w *workload) createCluster(ctx context.Context) error {
	pw, _ := w.sim.url.User.Password()
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.10", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterCluster", Name: "win"},
		},
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vcenter", Namespace: ns},
			Data: map[string][]byte{"username": []byte(w.sim.url.User.Username()), "password": []byte(pw)}},
		cluster,
		// The workload cluster is the same API server (the controller links Nodes through it).
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "win-kubeconfig", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"}},
			Type: clusterv1.ClusterSecretType, Data: map[string][]byte{"value": w.kubeconfig}},
	}
	for _, o := range objs {
		if err := w.k8s.Create(ctx, o); err != nil {
			return err
		}
	}
	vc := &infrav1.VCenterCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "win", UID: cluster.UID}}},
		Spec: infrav1.VCenterClusterSpec{Server: "https://" + w.sim.url.Host, Thumbprint: w.sim.thumbprint,
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter"}, Datacenter: "DC0"},
	}
	if err := w.k8s.Create(ctx, vc); err != nil {
		return err
	}
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	return w.k8s.Status().Update(ctx, cluster)
}

func name(i int) string { return fmt.Sprintf("win-md-0-%04d", i) }

func (w *workload) createMachines(ctx context.Context) error {
	labels := map[string]string{clusterv1.ClusterNameLabel: "win"}
	dataLabels := map[string]string{clusterv1.ClusterNameLabel: "win", benchutil.DataLabel: ""}
	data := []byte(strings.Repeat("#ps1_sysnative\n# bootstrap payload line\n", 300))
	for i := range w.n {
		n := name(i)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n + "-bootstrap", Namespace: ns, Labels: dataLabels},
			Data: map[string][]byte{"value": data, "format": []byte("cloud-config")}}
		m := &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns, Labels: labels},
			Spec: clusterv1.MachineSpec{ClusterName: "win", Version: "v1.36.3",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(secret.Name)},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "VCenterMachine", Name: n}},
		}
		for _, o := range []client.Object{secret, m} {
			if err := w.k8s.Create(ctx, o); err != nil {
				return err
			}
		}
		vm := &infrav1.VCenterMachine{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: n, UID: m.UID}}},
			Spec: infrav1.VCenterMachineSpec{
				Template: "DC0_H0_VM0", CloneMode: infrav1.FullClone, NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 40,
				Placement: infrav1.Placement{ResourcePool: "/DC0/host/DC0_C0/Resources"},
				Network:   []infrav1.NetworkDevice{{NetworkName: "VM Network", DHCP4: true}},
				OS:        infrav1.OSWindows, PowerOffMode: infrav1.PowerOffHard,
			},
		}
		if err := w.k8s.Create(ctx, vm); err != nil {
			return err
		}
	}
	return nil
}

// waitFor polls the VCenterMachines' progress until done says so.
func (w *workload) waitFor(ctx context.Context, what string, done func(live, provisioned int) bool) error {
	for {
		live, provisioned, err := w.progress(ctx)
		if err != nil {
			return err
		}
		if done(live, provisioned) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (%d exist, %d provisioned)", what, ctx.Err(), live, provisioned)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w *workload) waitProvisioned(ctx context.Context) error {
	return w.waitFor(ctx, "provisioned machines", func(_, provisioned int) bool { return provisioned == w.n })
}

func (w *workload) deleteMachines(ctx context.Context) error {
	return w.k8s.DeleteAllOf(ctx, &infrav1.VCenterMachine{}, client.InNamespace(ns))
}

// deleteRest deletes the Machines and bootstrap data Secrets, as CAPI and the garbage collector
// would once the infrastructure machines are gone.
func (w *workload) deleteRest(ctx context.Context) error {
	return benchutil.DeleteMachinesAndData(ctx, w.k8s, ns)
}

func (w *workload) waitGone(ctx context.Context) error {
	return w.waitFor(ctx, "deleted machines", func(live, _ int) bool { return live == 0 })
}
