package harness

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Snapshot is what the harness sees in the management cluster, the workload cluster and the
// hypervisor at one moment.
type Snapshot struct {
	// Machines counts the Cluster's Machines; MachinesReady those with condition Ready=True,
	// Deleting those being deleted.
	Machines, MachinesReady, MachinesDeleting int
	// NodesReady counts Ready Windows Nodes by node.kubernetes.io/windows-build.
	NodesReady map[string]int
	// Nodes counts all Nodes of the workload cluster.
	Nodes int
	// VMs counts the hypervisor's VMs that capwin created (templates and the simulator's own
	// VMs excluded); Files the disks and config drives they left on Hyper-V hosts.
	VMs, Files int
	// Rules counts the DRS rules and VM groups capwin created: anti-affinity rules, failure domain
	// VM groups and VM-Host rules (vCenter; 0 on Hyper-V); Tagged the attachments of the
	// harness's vSphere tags (VSphereTags) to VMs.
	Rules, Tagged int
	// Roles counts the VM roles of the Hyper-V hosts' failover cluster (0 without one).
	Roles int
	// Tokens counts bootstrap token Secrets in the workload cluster.
	Tokens int
}

// String is a one-line progress summary.
func (s Snapshot) String() string {
	var builds []string
	for b, n := range s.NodesReady {
		builds = append(builds, fmt.Sprintf("%d on %s", n, b))
	}
	sort.Strings(builds)
	nodes := "none"
	if len(builds) > 0 {
		nodes = strings.Join(builds, ", ")
	}
	return fmt.Sprintf("machines %d (ready %d, deleting %d) · VMs %d · Ready Windows nodes: %s",
		s.Machines, s.MachinesReady, s.MachinesDeleting, s.VMs, nodes)
}

// ReadyNodes is the number of Ready Windows Nodes of all builds.
func (s Snapshot) ReadyNodes() int {
	n := 0
	for _, c := range s.NodesReady {
		n += c
	}
	return n
}

// Snapshot reads the current state.
func (h *Harness) Snapshot(ctx context.Context) (Snapshot, error) {
	s := Snapshot{NodesReady: map[string]int{}}
	machines := &clusterv1.MachineList{}
	if err := h.Management.Client.List(ctx, machines, client.InNamespace(Namespace)); err != nil {
		return s, err
	}
	for _, m := range machines.Items {
		s.Machines++
		if !m.DeletionTimestamp.IsZero() {
			s.MachinesDeleting++
		} else if MachineReady(&m) {
			s.MachinesReady++
		}
	}
	nodes := &corev1.NodeList{}
	if err := h.WorkloadClient.List(ctx, nodes); err != nil {
		return s, err
	}
	s.Nodes = len(nodes.Items)
	for _, n := range nodes.Items {
		if n.Labels[corev1.LabelOSStable] == "windows" && nodeReady(&n) {
			s.NodesReady[n.Labels[corev1.LabelWindowsBuild]]++
		}
	}
	tokens := &corev1.SecretList{}
	if err := h.WorkloadClient.List(ctx, tokens, client.InNamespace(metav1.NamespaceSystem)); err != nil {
		return s, err
	}
	for _, t := range tokens.Items {
		if t.Type == corev1.SecretTypeBootstrapToken {
			s.Tokens++
		}
	}
	var err error
	if s.VMs, s.Files, err = h.hypervisorCounts(ctx); err != nil || h.opts.Provider == HyperV {
		if h.HyperVCluster != nil {
			s.Roles = len(h.HyperVCluster.Groups())
		}
		return s, err
	}
	s.Rules, s.Tagged, err = h.VSphere.countVSphere(ctx)
	return s, err
}

// MachineReady is true when the whole status says the Machine runs: Ready=True, its Node linked
// and phase Running. CAPI's patch helper writes a Machine's conditions before the rest of its
// status, so Ready=True alone can be seen for a moment while nodeRef is still empty.
func MachineReady(m *clusterv1.Machine) bool {
	return ready(m.Status.Conditions, clusterv1.MachineReadyCondition) && m.Status.NodeRef.IsDefined() &&
		m.Status.Phase == string(clusterv1.MachinePhaseRunning)
}

func ready(conds []metav1.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitFor polls Snapshot until done holds, calling progress whenever the summary changes.
func (h *Harness) WaitFor(ctx context.Context, what string, timeout time.Duration, done func(Snapshot) bool, progress func(Snapshot)) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last, seen := "", false
	var good Snapshot
	for {
		s, err := h.Snapshot(ctx)
		if err == nil {
			good, seen = s, true
			if progress != nil && s.String() != last {
				last = s.String()
				progress(s)
			}
			if done(s) {
				return s, nil
			}
		}
		select {
		case <-ctx.Done():
			if !seen {
				return good, fmt.Errorf("%s: %w (last error: %w)", what, ctx.Err(), err)
			}
			return good, fmt.Errorf("%s: not reached in %s; last seen: %s\n%s", what, timeout, good, h.Describe(context.WithoutCancel(ctx)))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
