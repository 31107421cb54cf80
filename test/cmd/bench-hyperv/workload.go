package main

import (
	"context"
	"fmt"
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

// userData is a small cloud-config bootstrap payload, as CABPK writes for Windows nodes.
var userData = []byte("Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Type: text/cloud-config\n\n" +
	"#cloud-config\nwrite_files:\n- path: C:\\k\\join.ps1\n  content: |\n    kubeadm join 10.0.0.10:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:0000\n" +
	"runcmd:\n- powershell -ExecutionPolicy Bypass -File C:\\k\\join.ps1\n--x--\n")

// workload creates one cluster on the hosts with n Windows machines.
type workload struct {
	// k8s writes and reads the API server; cache reads the manager's cache.
	k8s, cache client.Client
	kubeconfig []byte
	hosts      []hostInfo
	n          int
	placement  map[string]int // VMs per host once provisioned
}

func (w *workload) createCluster(ctx context.Context) error {
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "10.0.0.10", Port: 6443},
			InfrastructureRef:    clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "HyperVCluster", Name: "win"},
		},
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hosts", Namespace: ns},
			Data: map[string][]byte{"username": []byte(hostUser), "password": []byte(hostPassword)}},
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
	spec := infrav1.HyperVClusterSpec{VirtualSwitch: vswitch}
	for _, h := range w.hosts {
		spec.Hosts = append(spec.Hosts, infrav1.HyperVHost{Name: h.Name, Address: h.Host, Port: int32(h.Port), //nolint:gosec // G115: a TCP port, below 2^16
			CredentialsRef: infrav1.SecretReference{Name: "hosts"}, CABundle: h.CA})
	}
	hc := &infrav1.HyperVCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "win", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "win"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "win", UID: cluster.UID}}},
		Spec: spec,
	}
	if err := w.k8s.Create(ctx, hc); err != nil {
		return err
	}
	for !ptr.Deref(hc.Status.Initialization.Provisioned, false) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the HyperVCluster: %w (conditions %+v)", ctx.Err(), hc.Status.Conditions)
		case <-time.After(100 * time.Millisecond):
		}
		if err := w.k8s.Get(ctx, client.ObjectKeyFromObject(hc), hc); err != nil {
			return err
		}
	}
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	return w.k8s.Status().Update(ctx, cluster)
}

func name(i int) string { return fmt.Sprintf("win-md-0-%04d", i) }

func (w *workload) createMachines(ctx context.Context) error {
	labels := map[string]string{clusterv1.ClusterNameLabel: "win", clusterv1.MachineDeploymentNameLabel: "win-md-0"}
	dataLabels := map[string]string{clusterv1.ClusterNameLabel: "win", benchutil.DataLabel: ""}
	for i := range w.n {
		n := name(i)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n + "-bootstrap", Namespace: ns, Labels: dataLabels},
			Type: clusterv1.ClusterSecretType, Data: map[string][]byte{"value": userData, "format": []byte("cloud-config")}}
		m := &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns, Labels: labels},
			Spec: clusterv1.MachineSpec{ClusterName: "win", Version: "v1.36.3",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(secret.Name)},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "HyperVMachine", Name: n}},
		}
		for _, o := range []client.Object{secret, m} {
			if err := w.k8s.Create(ctx, o); err != nil {
				return err
			}
		}
		hvm := &infrav1.HyperVMachine{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: n, UID: m.UID}}},
			Spec: infrav1.HyperVMachineSpec{ParentDisk: parentDisk, Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}},
		}
		if err := w.k8s.Create(ctx, hvm); err != nil {
			return err
		}
	}
	return nil
}

// waitFor polls the HyperVMachines until none is pending.
func (w *workload) waitFor(ctx context.Context, what string, pending func(*infrav1.HyperVMachine) bool) ([]infrav1.HyperVMachine, error) {
	for {
		list := &infrav1.HyperVMachineList{}
		// Read only, every 100 ms: no deep copy of every machine (it made the benchmark's own CPU
		// grow with the square of the machines, counted in the controller's CPU per VM).
		if err := w.cache.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		var left []*infrav1.HyperVMachine
		for i := range list.Items {
			if pending(&list.Items[i]) {
				left = append(left, &list.Items[i])
			}
		}
		if len(left) == 0 {
			return list.Items, nil
		}
		select {
		case <-ctx.Done():
			m := left[0]
			return nil, fmt.Errorf("waiting for %s: %w (%d left; %s: state %q, conditions %+v)",
				what, ctx.Err(), len(left), m.Name, m.Status.Provisioning.State, m.Status.Conditions)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w *workload) waitProvisioned(ctx context.Context) error {
	items, err := w.waitFor(ctx, "provisioned machines", func(m *infrav1.HyperVMachine) bool {
		return !ptr.Deref(m.Status.Initialization.Provisioned, false)
	})
	if err != nil {
		return err
	}
	w.placement = map[string]int{}
	for _, m := range items {
		w.placement[m.Status.VM.Host]++
	}
	return nil
}

func (w *workload) deleteMachines(ctx context.Context) error {
	return w.k8s.DeleteAllOf(ctx, &infrav1.HyperVMachine{}, client.InNamespace(ns))
}

// deleteRest deletes the Machines and bootstrap data Secrets, as CAPI and the garbage collector
// would once the infrastructure machines are gone.
func (w *workload) deleteRest(ctx context.Context) error {
	return benchutil.DeleteMachinesAndData(ctx, w.k8s, ns)
}

func (w *workload) waitGone(ctx context.Context) error {
	_, err := w.waitFor(ctx, "deleted machines", func(*infrav1.HyperVMachine) bool { return true })
	return err
}
