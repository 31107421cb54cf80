package harness

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/harness/management"
)

// Namespace and ClusterName name the one workload Cluster of a harness.
const (
	Namespace         = "capwin-demo"
	ClusterName       = "win"
	KubernetesVersion = "v1.36.3"
)

// CreateCluster creates what a user (and, for the Secrets, the control plane provider) creates
// for a Cluster: namespace, infrastructure credentials, the VCenterCluster or HyperVCluster, the
// test control plane, the Cluster, the <cluster>-kubeconfig/-ca Secrets of the workload
// cluster; then it sets the control plane's endpoint to the workload apiserver.
func (h *Harness) CreateCluster(ctx context.Context) error {
	c := h.Management.Client
	guestLogin := secret(GuestCredentials, GuestUser, GuestPassword)
	// Referenced by no object of the cluster, so clusterctl move takes it by this label, as an
	// operator's guest login Secret needs.
	guestLogin.Labels = map[string]string{clusterctlv1.ClusterctlMoveLabel: ""}
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, guestLogin}
	objs = append(objs, h.infraClusterObjects()...)
	objs = append(objs, management.NewControlPlane(Namespace, ClusterName+"-cp"), h.clusterObject())
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	if err := h.Management.StoreWorkloadSecrets(ctx, h.clusterObject(), h.Workload); err != nil {
		return err
	}
	return h.Management.SetControlPlaneEndpoint(ctx, client.ObjectKey{Namespace: Namespace, Name: ClusterName + "-cp"}, h.Workload.Endpoint)
}

func (h *Harness) clusterObject() *clusterv1.Cluster {
	kind := "VCenterCluster"
	if h.opts.Provider == HyperV {
		kind = "HyperVCluster"
	}
	return &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterName, Namespace: Namespace},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: ClusterName},
			ControlPlaneRef:   management.ControlPlaneRef(ClusterName + "-cp"),
		},
	}
}

func (h *Harness) infraClusterObjects() []client.Object {
	meta := metav1.ObjectMeta{Name: ClusterName, Namespace: Namespace}
	if h.opts.Provider == HyperV {
		spec := infrav1.HyperVClusterSpec{VirtualSwitch: VirtualSwitch}
		for _, host := range h.HyperV {
			spec.Hosts = append(spec.Hosts, infrav1.HyperVHost{Name: host.Name, Address: host.Server.Host, Port: int32(host.Server.Port), //nolint:gosec // G115: a TCP port, below 2^16
				CredentialsRef: infrav1.SecretReference{Name: "hyperv-hosts"}, CABundle: host.Server.CACertPEM()})
		}
		if h.HyperVCluster != nil {
			spec.FailoverCluster = &infrav1.HyperVFailoverCluster{Name: HyperVFailoverClusterName, StoragePath: HyperVStoragePath}
		}
		return []client.Object{
			secret("hyperv-hosts", HostUser, HostPassword),
			&infrav1.HyperVCluster{ObjectMeta: meta, Spec: spec},
		}
	}
	u := h.VSphere.Server.URL
	pw, _ := u.User.Password()
	return []client.Object{
		secret("vcenter-identity", u.User.Username(), pw),
		&infrav1.VCenterCluster{ObjectMeta: meta, Spec: infrav1.VCenterClusterSpec{
			Server: "https://" + u.Host, Thumbprint: h.VSphere.Thumbprint(), Datacenter: h.VSphere.Datacenter,
			IdentityRef: infrav1.VCenterIdentityReference{Name: "vcenter-identity"},
			FailureDomains: []infrav1.VCenterFailureDomain{{Name: FailureDomain, Placement: infrav1.Placement{ResourcePool: h.VSphere.ResourcePool},
				HostGroup: &infrav1.VCenterHostGroup{Name: HostGroup, Mode: infrav1.HostGroupMust}}},
		}},
	}
}

// The guest administrator's login of the images (render logs --guest-credentials): the simulated
// guests accept any, as the hypervisors check it.
const (
	GuestCredentials = "guest-admin"
	GuestUser        = "Administrator"
	GuestPassword    = "Guest-adm1n!"
)

func secret(name, user, password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Data:       map[string][]byte{"username": []byte(user), "password": []byte(password)},
	}
}

// Workers is a Windows MachineDeployment.
type Workers struct {
	Name     string
	Image    string // a key of Images
	Replicas int32
	// MaxSurge and MaxUnavailable of the rolling update (defaults 1 and 0: blue/green).
	MaxSurge, MaxUnavailable int32
	// HyperVIsolation prepares the nodes for Hyper-V isolated pods (RuntimeClass windows-hyperv).
	HyperVIsolation bool
	// Bootstrap changes the bootstrap template's spec (the format, kubelet settings, registries...).
	Bootstrap func(*bootstrapv1.WindowsConfigSpec)
	// Machine changes the machine template before it is created, for this image and any later
	// one (SetWorkersImage): a *infrav1.VCenterMachineTemplate or *infrav1.HyperVMachineTemplate.
	Machine func(client.Object)
	// FailureDomain places the Machines (vSphere: the harness's FailureDomain; "": none).
	FailureDomain string
}

// CreateWorkers creates the Windows bootstrap template, the machine template of the image and
// the MachineDeployment.
func (h *Harness) CreateWorkers(ctx context.Context, w Workers) error {
	if w.MaxSurge == 0 && w.MaxUnavailable == 0 {
		w.MaxSurge = 1
	}
	c := h.Management.Client
	if err := c.Create(ctx, &bootstrapv1.WindowsConfigTemplate{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: Namespace},
		Spec: bootstrapv1.WindowsConfigTemplateSpec{Template: bootstrapv1.WindowsConfigTemplateResource{
			Spec: w.bootstrapSpec(),
		}}}); err != nil {
		return err
	}
	if w.Machine != nil {
		h.machine.Store(w.Name, w.Machine)
	}
	tmpl, err := h.ensureMachineTemplate(ctx, w.Name, w.Image)
	if err != nil {
		return err
	}
	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: Namespace},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: ClusterName, Replicas: ptr.To(w.Replicas),
			Rollout: clusterv1.MachineDeploymentRolloutSpec{Strategy: clusterv1.MachineDeploymentRolloutStrategy{
				Type: clusterv1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{
					MaxSurge: ptr.To(intstr.FromInt32(w.MaxSurge)), MaxUnavailable: ptr.To(intstr.FromInt32(w.MaxUnavailable)),
				},
			}},
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: ClusterName, Version: KubernetesVersion, FailureDomain: w.FailureDomain,
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "WindowsConfigTemplate", Name: w.Name}},
				InfrastructureRef: tmpl,
			}},
		},
	}
	return c.Create(ctx, md)
}

// HyperVIsolationLabel marks the Nodes whose containerd has the Hyper-V isolation handler; the
// windows-hyperv RuntimeClass schedules onto them only.
const HyperVIsolationLabel = "capwin.io/hyperv-isolation"

func (w Workers) bootstrapSpec() bootstrapv1.WindowsConfigSpec {
	spec := bootstrapv1.WindowsConfigSpec{}
	if w.HyperVIsolation {
		spec.HyperVIsolation = true
		spec.NodeRegistration.Labels = map[string]string{HyperVIsolationLabel: "true"}
	}
	if w.Bootstrap != nil {
		w.Bootstrap(&spec)
	}
	return spec
}

// CreateHealthCheck creates a MachineHealthCheck for a MachineDeployment's Machines: a Machine
// whose Node does not appear within startup, whose Node is not Ready for notReady, or whose Node
// has one of the flavors' node health conditions True for notReady, is remediated (replaced by
// its MachineSet).
func (h *Harness) CreateHealthCheck(ctx context.Context, workers string, startup, notReady time.Duration) error {
	timeout := func(d time.Duration) *int32 { return ptr.To(int32(d / time.Second)) } //nolint:gosec // G115: a test's health check timeout in seconds, far below 2^31
	conditions := []clusterv1.UnhealthyNodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: timeout(notReady)},
		{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: timeout(notReady)},
	}
	health, err := flavorHealthConditions()
	if err != nil {
		return err
	}
	for _, t := range health {
		conditions = append(conditions, clusterv1.UnhealthyNodeCondition{Type: t, Status: corev1.ConditionTrue, TimeoutSeconds: timeout(notReady)})
	}
	return h.Management.Client.Create(ctx, &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Name: workers, Namespace: Namespace},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: ClusterName,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineDeploymentNameLabel: workers}},
			Checks:      clusterv1.MachineHealthCheckChecks{NodeStartupTimeoutSeconds: timeout(startup), UnhealthyNodeConditions: conditions},
		},
	})
}

// SetWorkersImage switches a MachineDeployment to a machine template of another image: CAPI
// rolls the Machines out (a new MachineSet; old Machines drained and deleted).
func (h *Harness) SetWorkersImage(ctx context.Context, name, image string) error {
	tmpl, err := h.ensureMachineTemplate(ctx, name, image)
	if err != nil {
		return err
	}
	return h.patchWorkers(ctx, name, func(md *clusterv1.MachineDeployment) { md.Spec.Template.Spec.InfrastructureRef = tmpl })
}

// ScaleWorkers sets a MachineDeployment's replicas.
func (h *Harness) ScaleWorkers(ctx context.Context, name string, replicas int32) error {
	return h.patchWorkers(ctx, name, func(md *clusterv1.MachineDeployment) { md.Spec.Replicas = ptr.To(replicas) })
}

func (h *Harness) patchWorkers(ctx context.Context, name string, change func(*clusterv1.MachineDeployment)) error {
	c := h.Management.Client
	md := &clusterv1.MachineDeployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, md); err != nil {
		return err
	}
	before := md.DeepCopy()
	change(md)
	return c.Patch(ctx, md, client.MergeFrom(before))
}

// ensureMachineTemplate creates (once) the machine template <workers>-<image> and returns the
// reference a MachineDeployment uses. Templates are immutable: an image change is a new one.
func (h *Harness) ensureMachineTemplate(ctx context.Context, workers, image string) (clusterv1.ContractVersionedObjectReference, error) {
	img, ok := Images[image]
	if !ok {
		return clusterv1.ContractVersionedObjectReference{}, fmt.Errorf("unknown image %q", image)
	}
	meta := metav1.ObjectMeta{Name: workers + "-" + image, Namespace: Namespace}
	var obj client.Object
	kind := "VCenterMachineTemplate"
	if h.opts.Provider == HyperV {
		kind = "HyperVMachineTemplate"
		obj = &infrav1.HyperVMachineTemplate{ObjectMeta: meta, Spec: infrav1.HyperVMachineTemplateSpec{
			Template: infrav1.HyperVMachineTemplateResource{Spec: infrav1.HyperVMachineSpec{
				ParentDisk: img.HyperVDisk, Processors: 2, MemoryMiB: 4096, OS: infrav1.OSWindows,
				Network: []infrav1.HyperVNetworkDevice{{DHCP4: true}}, PowerOffMode: infrav1.PowerOffHard,
			}},
		}}
		if h.HyperVCluster != nil {
			obj.(*infrav1.HyperVMachineTemplate).Spec.Template.Spec.AntiAffinity = &infrav1.HyperVAntiAffinity{Mode: infrav1.AntiAffinitySoft}
		}
	} else {
		obj = &infrav1.VCenterMachineTemplate{ObjectMeta: meta, Spec: infrav1.VCenterMachineTemplateSpec{
			Template: infrav1.VCenterMachineTemplateResource{Spec: infrav1.VCenterMachineSpec{
				Template: img.VSphereTemplate, Placement: infrav1.Placement{ResourcePool: h.VSphere.ResourcePool},
				CloneMode: infrav1.FullClone, NumCPUs: 2, MemoryMiB: 4096, DiskGiB: 40, OS: infrav1.OSWindows,
				Network:      []infrav1.NetworkDevice{{NetworkName: h.VSphere.Network, DHCP4: true}},
				PowerOffMode: infrav1.PowerOffHard,
			}},
		}}
	}
	if change, ok := h.machine.Load(workers); ok {
		change.(func(client.Object))(obj)
	}
	if err := client.IgnoreAlreadyExists(h.Management.Client.Create(ctx, obj)); err != nil {
		return clusterv1.ContractVersionedObjectReference{}, err
	}
	return clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: meta.Name}, nil
}
