package main

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/harness"
)

// timeline records, from watches, when each Machine, infrastructure machine and Node first
// showed each milestone (the moment this process saw the change, not the second-granular
// timestamps the objects carry), and every replica change of the MachineSets.
type timeline struct {
	mu     sync.Mutex
	marks  map[string]map[string]time.Time // "machine/<name>", "infra/<name>", "node/<name>" → milestone → first seen
	links  map[string]link                 // Machine name → the names of its objects
	scales []scale
	sets   map[string]int32 // MachineSet → spec.replicas last seen
}

// link names a Machine's infrastructure machine, Node and MachineSet.
type link struct{ config, infra, node, set string }

// scale is one change of a MachineSet's spec.replicas.
type scale struct {
	at       time.Time
	set      string
	from, to int32
}

// Milestones of a Machine (m), its infrastructure machine (i) and its Node (n).
const (
	mCreated   = "created"
	mBootstrap = "bootstrap data"
	mInfra     = "infrastructure provisioned"
	mNodeRef   = "nodeRef"
	mReady     = "Ready"
	mAvailable = "Available"
	mDeleting  = "deleting"
	mGone      = "gone"
	cOwned     = "owned by its Machine"
	cData      = "data Secret"
	iState     = "state " // + the provisioning state, e.g. "state Cloning"
	iProvision = "provisioned"
	iReport    = "report " // + the bootstrap step the status shows
	nProvider  = "providerID"
	nReady     = "Ready"
	reasonMark = "reason " // + the reason of a Machine's Deleting condition
)

func newTimeline() *timeline {
	return &timeline{marks: map[string]map[string]time.Time{}, links: map[string]link{}, sets: map[string]int32{}}
}

// start watches Machines, MachineSets and infrastructure machines through the manager's cache
// and the workload cluster's Nodes with an informer of its own.
func (t *timeline) start(ctx context.Context, h *harness.Harness) error {
	c := h.Management.Manager.GetCache()
	var infra client.Object = &infrav1.VCenterMachine{}
	if h.Provider() == harness.HyperV {
		infra = &infrav1.HyperVMachine{}
	}
	for obj, f := range map[client.Object]func(any, bool){
		&clusterv1.Machine{}: t.machine, &clusterv1.MachineSet{}: t.machineSet, infra: t.infra, &bootstrapv1.WindowsConfig{}: t.config,
	} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(handler(f)); err != nil {
			return err
		}
	}
	cs, err := kubernetes.NewForConfig(h.Workload.Config)
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	if _, err := f.Core().V1().Nodes().Informer().AddEventHandler(handler(t.node)); err != nil {
		return err
	}
	f.Start(ctx.Done())
	return nil
}

// handler calls f with the object and whether it is gone.
func handler(f func(obj any, gone bool)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f(obj, false) },
		UpdateFunc: func(_, obj any) { f(obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			f(obj, true)
		},
	}
}

// mark records what for key the first time it is seen.
func (t *timeline) mark(key, what string, now time.Time) {
	m := t.marks[key]
	if m == nil {
		m = map[string]time.Time{}
		t.marks[key] = m
	}
	if _, ok := m[what]; !ok {
		m[what] = now
	}
}

func (t *timeline) machine(obj any, gone bool) {
	m, ok := obj.(*clusterv1.Machine)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	key := "machine/" + m.Name
	l := t.links[m.Name]
	l.config, l.infra, l.set = m.Spec.Bootstrap.ConfigRef.Name, m.Spec.InfrastructureRef.Name, m.Labels[clusterv1.MachineSetNameLabel]
	if m.Status.NodeRef.IsDefined() {
		l.node = m.Status.NodeRef.Name
	}
	t.links[m.Name] = l
	t.mark(key, mCreated, now)
	marks := map[string]bool{
		mBootstrap: ptr.Deref(m.Status.Initialization.BootstrapDataSecretCreated, false),
		mInfra:     ptr.Deref(m.Status.Initialization.InfrastructureProvisioned, false),
		mNodeRef:   m.Status.NodeRef.IsDefined(),
		mReady:     harness.MachineReady(m),
		mAvailable: meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineAvailableCondition),
		mDeleting:  !m.DeletionTimestamp.IsZero(),
		mGone:      gone,
	}
	for what, ok := range marks {
		if ok {
			t.mark(key, what, now)
		}
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineDeletingCondition); c != nil && !m.DeletionTimestamp.IsZero() {
		t.mark(key, reasonMark+c.Reason, now)
	}
}

func (t *timeline) machineSet(obj any, gone bool) {
	ms, ok := obj.(*clusterv1.MachineSet)
	if !ok || gone {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	to := ptr.Deref(ms.Spec.Replicas, 0)
	from, seen := t.sets[ms.Name]
	if !seen || from != to {
		t.scales = append(t.scales, scale{at: now, set: ms.Name, from: from, to: to})
		t.sets[ms.Name] = to
	}
}

// machineObject is what both infrastructure machine kinds have.
type machineObject interface {
	client.Object
	GetMachineStatus() *infrav1.MachineStatus
}

func (t *timeline) infra(obj any, gone bool) {
	m, ok := obj.(machineObject)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	key, st := "infra/"+m.GetName(), m.GetMachineStatus()
	t.mark(key, mCreated, now)
	if st.Provisioning.State != "" {
		t.mark(key, iState+string(st.Provisioning.State), now)
	}
	if ptr.Deref(st.Initialization.Provisioned, false) {
		t.mark(key, iProvision, now)
	}
	if st.Bootstrap.Step != "" {
		t.mark(key, iReport+st.Bootstrap.Step, now)
	}
	if !m.GetDeletionTimestamp().IsZero() {
		t.mark(key, mDeleting, now)
	}
	if gone {
		t.mark(key, mGone, now)
	}
}

func (t *timeline) config(obj any, gone bool) {
	c, ok := obj.(*bootstrapv1.WindowsConfig)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	key := "config/" + c.Name
	t.mark(key, mCreated, now)
	for _, o := range c.OwnerReferences {
		if o.Kind == "Machine" {
			t.mark(key, cOwned, now)
		}
	}
	if c.Status.DataSecretName != "" {
		t.mark(key, cData, now)
	}
	if gone {
		t.mark(key, mGone, now)
	}
}

func (t *timeline) node(obj any, gone bool) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	key := "node/" + n.Name
	t.mark(key, mCreated, now)
	if n.Spec.ProviderID != "" {
		t.mark(key, nProvider, now)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			t.mark(key, nReady, now)
		}
	}
	if gone {
		t.mark(key, mGone, now)
	}
}
