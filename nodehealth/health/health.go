// Package health is capwin's Windows node health checker: it looks at what Windows nodes really
// fail at while the kubelet may still report Ready (the HNS network of the pod network gone or of
// the wrong type, containerd's CRI pipe not answering, the kubelet's health endpoint failing, the
// system disk nearly full) and sets one Node condition per fault, True while the fault lasts. The
// flavors' MachineHealthCheck replaces a node whose condition stays True (replace, never repair).
// The idea of problem conditions set by a node agent is node-problem-detector's; that module is
// not used.
package health

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The Node conditions the checker sets: True means the fault is there.
const (
	HNSNetworkUnavailable     corev1.NodeConditionType = "HNSNetworkUnavailable"
	ContainerRuntimeUnhealthy corev1.NodeConditionType = "ContainerRuntimeUnhealthy"
	KubeletUnhealthy          corev1.NodeConditionType = "KubeletUnhealthy"
	SystemDiskNearlyFull      corev1.NodeConditionType = "SystemDiskNearlyFull"
)

// Conditions are the checker's condition types, in the order it reports them.
var Conditions = []corev1.NodeConditionType{HNSNetworkUnavailable, ContainerRuntimeUnhealthy, KubeletUnhealthy, SystemDiskNearlyFull}

// Network is an HNS network as Get-HnsNetwork shows it.
type Network struct {
	Name, Type string
}

// Probes read the node. Each returns what it saw; an error is a fault of that check.
type Probes interface {
	// Networks lists the HNS networks.
	Networks(ctx context.Context) ([]Network, error)
	// Runtime asks containerd's CRI endpoint for its version.
	Runtime(ctx context.Context) error
	// Kubelet reads the kubelet's health endpoint.
	Kubelet(ctx context.Context) error
	// Disk returns the system disk's free and total bytes.
	Disk(ctx context.Context) (free, total uint64, err error)
}

// Config of a Checker.
type Config struct {
	Node string
	// Network is the name of the pod network's HNS network (Calico, vxlan0) and NetworkType its
	// type (Overlay for VXLAN).
	Network, NetworkType string
	// MinFreePercent of the system disk below which SystemDiskNearlyFull is True (default 10).
	MinFreePercent float64
	// Timeout bounds each probe (default 10s).
	Timeout time.Duration
}

// Checker sets the Node conditions of one node from its probes.
type Checker struct {
	cfg    Config
	probes Probes
	cs     kubernetes.Interface
	// networkSeen: the pod network's HNS network existed once. Before, its absence is the CNI
	// still starting (the kubelet reports that itself: no CNI configuration, not Ready).
	networkSeen bool
}

// New is a Checker.
func New(cfg Config, probes Probes, cs kubernetes.Interface) *Checker {
	if cfg.MinFreePercent <= 0 {
		cfg.MinFreePercent = 10
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &Checker{cfg: cfg, probes: probes, cs: cs}
}

// Run checks every interval until ctx ends; a failed Node update is tried at the next check.
func (c *Checker) Run(ctx context.Context, interval time.Duration, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := c.Check(ctx); err != nil && report != nil && ctx.Err() == nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check runs every probe once and writes the conditions to the Node.
func (c *Checker) Check(ctx context.Context) error {
	return c.write(ctx, c.observe(ctx))
}

// finding is one condition's state: fault, reason and message.
type finding struct {
	fault           bool
	reason, message string
}

func (c *Checker) observe(ctx context.Context) map[corev1.NodeConditionType]finding {
	probe := func(f func(context.Context) error) error {
		ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
		return f(ctx)
	}
	out := map[corev1.NodeConditionType]finding{HNSNetworkUnavailable: c.network(ctx)}
	if err := probe(c.probes.Runtime); err != nil {
		out[ContainerRuntimeUnhealthy] = finding{true, "CRINotAnswering", "containerd's CRI endpoint does not answer: " + err.Error()}
	} else {
		out[ContainerRuntimeUnhealthy] = finding{false, "CRIAnswers", "containerd answers on its CRI endpoint"}
	}
	if err := probe(c.probes.Kubelet); err != nil {
		out[KubeletUnhealthy] = finding{true, "HealthzFailing", "the kubelet's health endpoint: " + err.Error()}
	} else {
		out[KubeletUnhealthy] = finding{false, "HealthzOK", "the kubelet's health endpoint answers ok"}
	}
	out[SystemDiskNearlyFull] = c.disk(ctx)
	return out
}

func (c *Checker) network(ctx context.Context) finding {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	nets, err := c.probes.Networks(ctx)
	if err != nil {
		return finding{true, "HNSNotAnswering", "HNS does not list its networks: " + err.Error()}
	}
	for _, n := range nets {
		if n.Name != c.cfg.Network {
			continue
		}
		c.networkSeen = true
		if c.cfg.NetworkType != "" && n.Type != c.cfg.NetworkType {
			return finding{true, "NetworkMismatch", fmt.Sprintf("HNS network %s is of type %s, the pod network needs %s", n.Name, n.Type, c.cfg.NetworkType)}
		}
		return finding{false, "NetworkPresent", fmt.Sprintf("HNS network %s (%s) is there", n.Name, n.Type)}
	}
	if !c.networkSeen {
		return finding{false, "WaitingForNetwork", fmt.Sprintf("HNS network %s has not been created yet (the pod network starts)", c.cfg.Network)}
	}
	return finding{true, "NetworkMissing", fmt.Sprintf("HNS network %s is gone: pods on this node cannot be networked", c.cfg.Network)}
}

func (c *Checker) disk(ctx context.Context) finding {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	free, total, err := c.probes.Disk(ctx)
	if err != nil || total == 0 {
		return finding{false, "DiskUnknown", fmt.Sprintf("the system disk's free space could not be read: %v", err)}
	}
	pct := 100 * float64(free) / float64(total)
	msg := fmt.Sprintf("C: has %.1f%% free (%d of %d MiB)", pct, free>>20, total>>20)
	if pct < c.cfg.MinFreePercent {
		return finding{true, "DiskNearlyFull", msg + fmt.Sprintf(", below %.0f%%", c.cfg.MinFreePercent)}
	}
	return finding{false, "DiskHasRoom", msg}
}

// write patches the conditions into the Node's status (a strategic merge patch: conditions merge
// by type, the kubelet's stay): the heartbeat each time, the transition time when a condition's
// status changes.
func (c *Checker) write(ctx context.Context, found map[corev1.NodeConditionType]finding) error {
	node, err := c.cs.CoreV1().Nodes().Get(ctx, c.cfg.Node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read Node %s: %w", c.cfg.Node, err)
	}
	now := metav1.Now()
	var conds []corev1.NodeCondition
	for _, t := range Conditions {
		f := found[t]
		status := corev1.ConditionFalse
		if f.fault {
			status = corev1.ConditionTrue
		}
		cond := corev1.NodeCondition{Type: t, Status: status, Reason: f.reason, Message: f.message, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, old := range node.Status.Conditions {
			if old.Type == t && old.Status == status {
				cond.LastTransitionTime = old.LastTransitionTime
			}
		}
		conds = append(conds, cond)
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if err != nil {
		return err
	}
	_, err = c.cs.CoreV1().Nodes().PatchStatus(ctx, c.cfg.Node, patch)
	if err != nil {
		return fmt.Errorf("write the conditions of Node %s: %w", c.cfg.Node, err)
	}
	return nil
}
