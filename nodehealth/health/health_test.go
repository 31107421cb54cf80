package health

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capwin/capwin/internal/test/envtest"
)

// probes is what a test makes the node look like.
type probes struct {
	nets        []Network
	runtime     error
	kubelet     error
	free, total uint64
}

func (p *probes) Networks(context.Context) ([]Network, error)  { return p.nets, nil }
func (p *probes) Runtime(context.Context) error                { return p.runtime }
func (p *probes) Kubelet(context.Context) error                { return p.kubelet }
func (p *probes) Disk(context.Context) (uint64, uint64, error) { return p.free, p.total, nil }

// TestChecker runs the checker against a real API server: the conditions appear beside the
// kubelet's, each fault turns its condition True with a reason, a transition time moves only when
// the status changes, and an HNS network that was never there is the pod network starting.
func TestChecker(t *testing.T) {
	if testing.Short() {
		t.Skip("envtest")
	}
	g := NewWithT(t)
	env, err := envtest.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	ctx := t.Context()
	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-a"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	p := &probes{free: 50 << 30, total: 100 << 30}
	c := New(Config{Node: "win-a", Network: "Calico", NetworkType: "Overlay"}, p, cs)
	conditions := func() map[corev1.NodeConditionType]corev1.NodeCondition {
		g.Expect(c.Check(ctx)).To(Succeed())
		n, err := cs.CoreV1().Nodes().Get(ctx, "win-a", metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		out := map[corev1.NodeConditionType]corev1.NodeCondition{}
		for _, c := range n.Status.Conditions {
			out[c.Type] = c
		}
		return out
	}

	got := conditions()
	g.Expect(got).To(HaveKey(corev1.NodeReady), "the kubelet's condition stays")
	for _, t := range Conditions {
		g.Expect(got[t].Status).To(Equal(corev1.ConditionFalse), string(t))
	}
	g.Expect(got[HNSNetworkUnavailable].Reason).To(Equal("WaitingForNetwork"))

	p.nets = []Network{{Name: "nat", Type: "NAT"}, {Name: "Calico", Type: "Overlay"}}
	healthy := conditions()[HNSNetworkUnavailable]
	g.Expect(healthy.Reason).To(Equal("NetworkPresent"))
	time.Sleep(1100 * time.Millisecond) // condition times have a resolution of one second

	p.nets = []Network{{Name: "nat", Type: "NAT"}}
	p.runtime, p.kubelet = errors.New("pipe busy"), errors.New("connection refused")
	p.free = 5 << 30
	got = conditions()
	g.Expect(got[HNSNetworkUnavailable]).To(And(HaveField("Status", corev1.ConditionTrue), HaveField("Reason", "NetworkMissing")))
	g.Expect(got[HNSNetworkUnavailable].LastTransitionTime.After(healthy.LastTransitionTime.Time)).To(BeTrue())
	g.Expect(got[ContainerRuntimeUnhealthy]).To(And(HaveField("Status", corev1.ConditionTrue), HaveField("Message", ContainSubstring("pipe busy"))))
	g.Expect(got[KubeletUnhealthy]).To(And(HaveField("Status", corev1.ConditionTrue), HaveField("Message", ContainSubstring("connection refused"))))
	g.Expect(got[SystemDiskNearlyFull]).To(And(HaveField("Status", corev1.ConditionTrue), HaveField("Message", ContainSubstring("C: has 5.0% free"))))
	missing := got[HNSNetworkUnavailable]
	time.Sleep(1100 * time.Millisecond)
	g.Expect(conditions()[HNSNetworkUnavailable].LastTransitionTime).To(Equal(missing.LastTransitionTime), "no change, no transition")

	p.nets = []Network{{Name: "Calico", Type: "L2Bridge"}}
	g.Expect(conditions()[HNSNetworkUnavailable]).To(And(HaveField("Status", corev1.ConditionTrue), HaveField("Reason", "NetworkMismatch")))
}
