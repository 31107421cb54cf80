package chaos

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vmware/govmomi/vim25/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/harness/management"
)

// Names of what the soak creates besides the workers.
const (
	badCluster = "chaos-bad"
	badUser    = "chaos-bad-user"
	hostile    = "chaos-hostile"
)

// decoys are VMs capwin did not create (vcsim's own VMs; on Hyper-V one VM marked for another
// object), a machine whose providerID points at one of them, and a cluster whose credential is
// refused.
type decoys struct {
	h  *harness.Harness
	vf *vsphereFaults
	// before: decoy -> its state ("power/changeVersion" or "state/notes").
	before map[string]string
	// refused counts vcsim's refused logins of badUser; authFailures are the Hyper-V hosts'
	// refused logins when the soak began.
	refused      atomic.Int64
	authFailures int64
	providerID   string
}

func newDecoys(ctx context.Context, h *harness.Harness, vf *vsphereFaults) (*decoys, error) {
	d := &decoys{h: h, vf: vf}
	if h.Provider() == harness.HyperV {
		return d, d.hypervDecoy(ctx)
	}
	vms, err := vsphereVMs(ctx, h)
	if err != nil {
		return nil, err
	}
	for _, vm := range vms {
		if strings.HasPrefix(vm.Name, "DC0_") && vm.Config != nil && !vm.Config.Template && d.providerID == "" {
			vf.decoys.Store(vm.Self.Value, true)
			d.providerID = "vsphere://" + vm.Config.Uuid
		}
	}
	d.before, err = d.state(ctx)
	if d.providerID == "" {
		return nil, fmt.Errorf("vcsim has no VM of its own to use as a decoy")
	}
	return d, err
}

// hypervDecoy creates a VM on the first host as another owner would (through the host's WinRM).
func (d *decoys) hypervDecoy(ctx context.Context) error {
	host := d.h.HyperV[0]
	conn, err := hyperv.Dial(hyperv.HostConfig{Name: host.Name, Address: host.Server.Host, Port: host.Server.Port,
		Username: harness.HostUser, Password: harness.HostPassword, CABundle: host.Server.CACertPEM()}, 30*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	var disk string
	for _, img := range harness.Images {
		disk = img.HyperVDisk
	}
	in := wire.CreateInput{VMKey: wire.VMKey{Placement: wire.Placement{VMPath: hyperv.DefaultVMPath, DiskPath: hyperv.DefaultDiskPath},
		UID: "someone-elses-vm"}, Name: "decoy", ParentDisk: disk, Processors: 2, MemoryBytes: 2 << 30,
		NICs: []wire.NICInput{{Switch: harness.VirtualSwitch, MAC: "00155D000001"}}, Settings: hyperv.DefaultVMSettings()}
	var v wire.View
	if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
		return err
	}
	d.providerID = hyperv.ProviderID(host.Name, v.ID)
	d.before, err = d.state(ctx)
	return err
}

// state reads every decoy's state.
func (d *decoys) state(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	if d.h.Provider() == harness.HyperV {
		for _, host := range d.h.HyperV {
			for _, vm := range host.VMs() {
				if noteValue(vm.Notes, "capwin-uid:") == "someone-elses-vm" {
					out[host.Name+"/"+vm.ID] = vm.State + "/" + vm.Notes
				}
			}
		}
		return out, nil
	}
	vms, err := vsphereVMs(ctx, d.h)
	for _, vm := range vms {
		if _, ok := d.vf.decoys.Load(vm.Self.Value); ok {
			out[vm.Self.Value] = fmt.Sprintf("%s/%s", vm.Runtime.PowerState, vm.Config.ChangeVersion)
		}
	}
	return out, err
}

// badCluster creates a second Cluster whose hypervisor credential is refused, and starts counting
// the refused logins.
func (d *decoys) badCluster(ctx context.Context) error {
	c := d.h.Management.Client
	key := client.ObjectKey{Namespace: harness.Namespace, Name: harness.ClusterName}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: badCluster, Namespace: harness.Namespace},
		Data: map[string][]byte{"username": []byte(badUser), "password": []byte("not-the-password")}}
	var infra client.Object
	kind := "VCenterCluster"
	if d.h.Provider() == harness.HyperV {
		kind = "HyperVCluster"
		hc := &infrav1.HyperVCluster{}
		if err := c.Get(ctx, key, hc); err != nil {
			return err
		}
		spec := hc.Spec.DeepCopy()
		spec.CredentialsRef = infrav1.HyperVIdentityReference{Name: badCluster}
		for i := range spec.Hosts {
			spec.Hosts[i].CredentialsRef = infrav1.SecretReference{Name: badCluster}
		}
		infra = &infrav1.HyperVCluster{ObjectMeta: metav1.ObjectMeta{Name: badCluster, Namespace: harness.Namespace}, Spec: *spec}
		for _, host := range d.h.HyperV {
			d.authFailures += host.Server.Stats().AuthFailures
		}
	} else {
		vc := &infrav1.VCenterCluster{}
		if err := c.Get(ctx, key, vc); err != nil {
			return err
		}
		spec := vc.Spec.DeepCopy()
		spec.IdentityRef = infrav1.VCenterIdentityReference{Name: badCluster}
		infra = &infrav1.VCenterCluster{ObjectMeta: metav1.ObjectMeta{Name: badCluster, Namespace: harness.Namespace}, Spec: *spec}
		// vcsim accepts any login while it listens with its default user: name the harness's
		// user explicitly (same name and password), so ValidLogin decides.
		u := d.h.VSphere.Server.URL.User
		pw, _ := u.Password()
		d.h.VSphere.Model.Service.Listen.User = url.UserPassword(u.Username(), pw)
		d.h.VSphere.Model.Map().SessionManager().ValidLogin = func(req *types.Login) bool {
			if req.UserName == badUser {
				d.refused.Add(1)
				return false
			}
			return req.UserName == u.Username() && req.Password == pw
		}
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: badCluster, Namespace: harness.Namespace},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: badCluster},
			ControlPlaneRef:   management.ControlPlaneRef(badCluster + "-cp"),
		}}
	for _, o := range []client.Object{secret, infra, management.NewControlPlane(harness.Namespace, badCluster+"-cp"), cluster} {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// refusedLogins returns the refused logins of the bad credential and their bound: one per server
// and Secret version (the login gate).
func (d *decoys) refusedLogins() (int64, int64) {
	if d.h.Provider() != harness.HyperV {
		return d.refused.Load(), 1
	}
	var n int64
	for _, host := range d.h.HyperV {
		n += host.Server.Stats().AuthFailures
	}
	return n - d.authFailures, int64(len(d.h.HyperV))
}

// hostileMachine creates a Machine whose infrastructure machine names a decoy in spec.providerID,
// as a user of the namespace could, with a template's spec otherwise.
func (d *decoys) hostileMachine(ctx context.Context, template string) error {
	c := d.h.Management.Client
	meta := metav1.ObjectMeta{Name: hostile, Namespace: harness.Namespace}
	key := client.ObjectKey{Namespace: harness.Namespace, Name: template}
	var infra client.Object
	kind := "VCenterMachine"
	if d.h.Provider() == harness.HyperV {
		kind = "HyperVMachine"
		t := &infrav1.HyperVMachineTemplate{}
		if err := c.Get(ctx, key, t); err != nil {
			return err
		}
		m := &infrav1.HyperVMachine{ObjectMeta: meta, Spec: t.Spec.Template.Spec}
		m.Spec.ProviderID = d.providerID
		infra = m
	} else {
		t := &infrav1.VCenterMachineTemplate{}
		if err := c.Get(ctx, key, t); err != nil {
			return err
		}
		m := &infrav1.VCenterMachine{ObjectMeta: meta, Spec: t.Spec.Template.Spec}
		m.Spec.ProviderID = d.providerID
		infra = m
	}
	data := &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"value": []byte("#ps1_sysnative\n"), "format": []byte("powershell")}}
	machine := &clusterv1.Machine{ObjectMeta: meta, Spec: clusterv1.MachineSpec{
		ClusterName: harness.ClusterName, Version: harness.KubernetesVersion,
		Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(hostile)},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: hostile},
	}}
	for _, o := range []client.Object{data, infra, machine} {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// badClusterCondition is the bad-credential cluster's HypervisorAvailable condition as
// "Reason: message".
func (d *decoys) badClusterCondition(ctx context.Context) string {
	key := client.ObjectKey{Namespace: harness.Namespace, Name: badCluster}
	var obj interface {
		client.Object
		GetConditions() []metav1.Condition
	} = &infrav1.VCenterCluster{}
	if d.h.Provider() == harness.HyperV {
		obj = &infrav1.HyperVCluster{}
	}
	if err := d.h.Management.Client.Get(ctx, key, obj); err != nil {
		return err.Error()
	}
	return conditionOf(obj.GetConditions(), infrav1.HypervisorAvailableCondition)
}

// conditionOf returns a condition as "Reason: message".
func conditionOf(conds []metav1.Condition, t string) string {
	for _, c := range conds {
		if c.Type == t {
			return c.Reason + ": " + c.Message
		}
	}
	return "no " + t + " condition"
}

// hostileCondition is the hostile machine's VMProvisioned condition as "Reason: message".
func (d *decoys) hostileCondition(ctx context.Context) string {
	key := client.ObjectKey{Namespace: harness.Namespace, Name: hostile}
	var conds []metav1.Condition
	if d.h.Provider() == harness.HyperV {
		m := &infrav1.HyperVMachine{}
		if err := d.h.Management.Client.Get(ctx, key, m); err != nil {
			return err.Error()
		}
		conds = m.Status.Conditions
	} else {
		m := &infrav1.VCenterMachine{}
		if err := d.h.Management.Client.Get(ctx, key, m); err != nil {
			return err.Error()
		}
		conds = m.Status.Conditions
	}
	return conditionOf(conds, infrav1.VMProvisionedCondition)
}
