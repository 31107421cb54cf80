package move_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/test/framework/harness"
	"github.com/capwin/capwin/test/framework/harness/management"
)

// vm is what identifies a VM on vSphere: a clone or a re-create changes every field but Name.
type vm struct {
	Ref, Name, InstanceUUID, BIOSUUID, Power string
	UserData                                 bool // guestinfo.userdata still holds a join token
}

func (v vm) String() string {
	return fmt.Sprintf("%s(%s instance=%s bios=%s %s)", v.Name, v.Ref, v.InstanceUUID, v.BIOSUUID, v.Power)
}

// vsphere is the test's own session with vcsim (never a provider's).
type vsphere struct{ c *vim25.Client }

func loginVSphere(ctx context.Context, s *simulator.Server) (*vsphere, error) {
	c, err := vim25.NewClient(ctx, soap.NewClient(s.URL, true))
	if err != nil {
		return nil, err
	}
	if err := session.NewManager(c).Login(ctx, s.URL.User); err != nil {
		return nil, err
	}
	return &vsphere{c: c}, nil
}

func (v *vsphere) logout(ctx context.Context) { _ = session.NewManager(v.c).Logout(ctx) }

// vms lists capwin's VMs by managed object reference, through a container view over every
// VirtualMachine: templates and the simulator model's own VMs (DC0_…) are left out.
func (v *vsphere) vms(ctx context.Context) (map[string]vm, error) {
	cv, err := view.NewManager(v.c).CreateContainerView(ctx, v.c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cv.Destroy(ctx) }()
	var list []mo.VirtualMachine
	if err := cv.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config", "runtime.powerState"}, &list); err != nil {
		return nil, err
	}
	out := map[string]vm{}
	for _, m := range list {
		if m.Config == nil || m.Config.Template || strings.HasPrefix(m.Name, "DC0_") {
			continue
		}
		x := vm{Ref: m.Self.Value, Name: m.Name, InstanceUUID: m.Config.InstanceUuid, BIOSUUID: m.Config.Uuid, Power: string(m.Runtime.PowerState)}
		for _, o := range m.Config.ExtraConfig {
			if ov := o.GetOptionValue(); ov != nil && ov.Key == "guestinfo.userdata" {
				s, _ := ov.Value.(string)
				x.UserData = s != ""
			}
		}
		out[x.Ref] = x
	}
	return out, nil
}

// monitor samples, every interval until stopped, the VMs on vcsim and the bootstrap token
// Secrets of the workload cluster, and records every change: a VM that came or went (or whose
// identity changed) and every token that appeared.
type monitor struct {
	mu         sync.Mutex
	vmChanges  []string
	tokensSeen map[string]time.Time
	samples    int
	errs       int
	lastErr    error
	stop       context.CancelFunc
	done       chan struct{}
}

func startMonitor(ctx context.Context, v *vsphere, workload crclient.Client, baseline map[string]vm, interval time.Duration) *monitor {
	ctx, cancel := context.WithCancel(ctx)
	m := &monitor{tokensSeen: map[string]time.Time{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		last := baseline
		for ctx.Err() == nil {
			vms, err := v.vms(ctx)
			var tokens []string
			if err == nil {
				tokens, err = bootstrapTokens(ctx, workload)
			}
			m.mu.Lock()
			if err != nil {
				if ctx.Err() == nil {
					m.errs++
					m.lastErr = err
				}
			} else {
				m.samples++
				for _, c := range diffVMs(last, vms) {
					m.vmChanges = append(m.vmChanges, time.Now().Format("15:04:05.000")+" "+c)
				}
				last = vms
				for _, t := range tokens {
					if _, ok := m.tokensSeen[t]; !ok {
						m.tokensSeen[t] = time.Now()
					}
				}
			}
			m.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
	}()
	return m
}

// result stops the monitor and returns the VM changes and the tokens it saw.
func (m *monitor) result() (vmChanges []string, tokens []string, samples, errs int, lastErr error) {
	m.stop()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.vmChanges, slices.Sorted(maps.Keys(m.tokensSeen)), m.samples, m.errs, m.lastErr
}

// diffVMs describes how after differs from before (VMs gone, new, or with another identity).
func diffVMs(before, after map[string]vm) []string {
	var out []string
	for ref, b := range before {
		a, ok := after[ref]
		switch {
		case !ok:
			out = append(out, "VM gone: "+b.String())
		case a.InstanceUUID != b.InstanceUUID || a.BIOSUUID != b.BIOSUUID || a.Name != b.Name:
			out = append(out, "VM changed identity: "+b.String()+" -> "+a.String())
		case a.Power != b.Power:
			out = append(out, "VM power changed: "+b.String()+" -> "+a.Power)
		}
	}
	for ref, a := range after {
		if _, ok := before[ref]; !ok {
			out = append(out, "VM new: "+a.String())
		}
	}
	sort.Strings(out)
	return out
}

// bootstrapTokens lists the bootstrap token Secrets of the workload cluster.
func bootstrapTokens(ctx context.Context, c crclient.Client) ([]string, error) {
	list := &corev1.SecretList{}
	if err := c.List(ctx, list, crclient.InNamespace(metav1.NamespaceSystem)); err != nil {
		return nil, err
	}
	var out []string
	for _, s := range list.Items {
		if s.Type == corev1.SecretTypeBootstrapToken {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// movedKinds are the kinds of the Cluster's objects that must move (and be gone from the
// source afterwards); Secrets are listed by names.
var movedKinds = []schema.GroupVersionKind{
	clusterv1.GroupVersion.WithKind("Cluster"),
	clusterv1.GroupVersion.WithKind("MachineDeployment"),
	clusterv1.GroupVersion.WithKind("MachineSet"),
	clusterv1.GroupVersion.WithKind("Machine"),
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "VCenterCluster"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "VCenterMachineTemplate"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "VCenterMachine"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "WindowsConfigTemplate"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "WindowsConfig"},
	management.ControlPlaneGVK,
	corev1.SchemeGroupVersion.WithKind("Secret"),
}

// inventory lists the names of every moved kind in the harness namespace ("Kind" -> names).
func inventory(ctx context.Context, c crclient.Client) (map[string][]string, error) {
	out := map[string][]string{}
	for _, gvk := range movedKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list, crclient.InNamespace(harness.Namespace)); err != nil {
			return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		names := []string{}
		for _, o := range list.Items {
			names = append(names, o.GetName())
		}
		sort.Strings(names)
		out[gvk.Kind] = names
	}
	return out, nil
}

// conditionStatus returns a condition's status ("" when absent).
func conditionStatus(conds []metav1.Condition, t string) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return c.Status
	}
	return ""
}

// dataSecret is what a bootstrap data Secret holds that a re-render would change.
type dataSecret struct {
	ValueHash, TokenID, Revoked string
}

// dataSecrets returns the data Secrets of the WindowsConfigs, by name.
func dataSecrets(ctx context.Context, c crclient.Client, names []string) (map[string]dataSecret, error) {
	out := map[string]dataSecret{}
	for _, n := range names {
		s := &corev1.Secret{}
		if err := c.Get(ctx, crclient.ObjectKey{Namespace: harness.Namespace, Name: n}, s); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(s.Data["value"])
		out[n] = dataSecret{ValueHash: hex.EncodeToString(sum[:8]),
			TokenID: s.Annotations["bootstrap.cluster.x-k8s.io/windows-token-id"], Revoked: s.Annotations["bootstrap.cluster.x-k8s.io/windows-token-revoked"]}
	}
	return out, nil
}

// mutating are the vSphere methods that change a VM (all *_Task methods do, too).
var mutating = map[string]bool{"ShutdownGuest": true, "RebootGuest": true, "StandbyGuest": true, "MarkAsTemplate": true,
	"MarkAsVirtualMachine": true, "StartProgramInGuest": true, "InitiateFileTransferToGuest": true, "MakeDirectoryInGuest": true}

// mutatingCalls returns the calls of delta (method -> count) that change something on vSphere.
func mutatingCalls(delta map[string]int) map[string]int {
	out := map[string]int{}
	for m, n := range delta {
		if n > 0 && (strings.HasSuffix(m, "_Task") || mutating[m]) {
			out[m] = n
		}
	}
	return out
}

// callsSince returns now - before per method.
func callsSince(before, now map[string]int) map[string]int {
	out := map[string]int{}
	for m, n := range now {
		if d := n - before[m]; d > 0 {
			out[m] = d
		}
	}
	return out
}
