package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

const ns = "bench"

// workload creates one cluster with n Windows machines and plays their guests.
type workload struct {
	k8s        client.Client
	kubeconfig []byte
	sim        *vcsimProcess
	n          int
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
	data := []byte(strings.Repeat("#ps1_sysnative\n# bootstrap payload line\n", 300))
	for i := range w.n {
		n := name(i)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n + "-bootstrap", Namespace: ns, Labels: labels},
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

// waitFor polls the VCenterMachines until done says so.
func (w *workload) waitFor(ctx context.Context, what string, done func([]infrav1.VCenterMachine) bool) error {
	for {
		list := &infrav1.VCenterMachineList{}
		if err := w.k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if done(list.Items) {
			return nil
		}
		select {
		case <-ctx.Done():
			if len(list.Items) > 0 {
				m := list.Items[0]
				return fmt.Errorf("waiting for %s: %w (%s: state %q, conditions %+v)", what, ctx.Err(), m.Name, m.Status.Provisioning.State, m.Status.Conditions)
			}
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w *workload) waitProvisioned(ctx context.Context) error {
	return w.waitFor(ctx, "provisioned machines", func(items []infrav1.VCenterMachine) bool {
		n := 0
		for _, m := range items {
			if ptr.Deref(m.Status.Initialization.Provisioned, false) {
				n++
			}
		}
		return n == w.n
	})
}

func (w *workload) deleteMachines(ctx context.Context) error {
	return w.k8s.DeleteAllOf(ctx, &infrav1.VCenterMachine{}, client.InNamespace(ns))
}

func (w *workload) waitGone(ctx context.Context) error {
	return w.waitFor(ctx, "deleted machines", func(items []infrav1.VCenterMachine) bool { return len(items) == 0 })
}

// guest plays every VM's guest: once powered on, VMware Tools reports an IP. It uses its own
// vCenter session, so its calls are not counted as the controller's.
func (w *workload) guest(ctx context.Context) {
	c, err := vim25.NewClient(ctx, soap.NewClient(w.sim.url, true))
	if err == nil {
		err = session.NewManager(c).Login(ctx, w.sim.url.User)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "guest simulator:", err)
		return
	}
	next := 1
	booted := map[string]bool{}
	for ctx.Err() == nil {
		var vms []mo.VirtualMachine
		v, err := view.NewManager(c).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
		if err == nil {
			err = v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "runtime.powerState"}, &vms)
			_ = v.Destroy(ctx)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "guest simulator:", err)
		}
		for _, vm := range vms {
			if !strings.HasPrefix(vm.Name, "win-md-0-") || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || booted[vm.Self.Value] {
				continue
			}
			booted[vm.Self.Value] = true
			ip := fmt.Sprintf("10.1.%d.%d", next/250, next%250+1)
			next++
			task, err := object.NewVirtualMachine(c, vm.Self).Reconfigure(ctx, types.VirtualMachineConfigSpec{
				ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: "SET.guest.ipAddress", Value: ip}}})
			if err == nil {
				err = task.Wait(ctx)
			}
			if err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "guest simulator:", vm.Name, err)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}
