package guest

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
)

// guestNetworks numbers the kubelets of this process: each gets its own /24 of 100.64.0.0/10
// for Pod IPs, as a CNI's per-node block (Node IPAM is off in the workload cluster, so there is
// no spec.podCIDR to take it from).
var guestNetworks atomic.Uint32

// podNetwork hands out the Pod IPs of one node.
type podNetwork struct {
	mu    sync.Mutex
	base  uint32
	next  uint32
	byPod map[string]string
}

func newPodNetwork() podNetwork {
	block := (guestNetworks.Add(1) - 1) % (1 << 14) // 100.64.0.0/10 holds 2^14 /24s
	return podNetwork{base: binary.BigEndian.Uint32(net.IPv4(100, 64, 0, 0).To4()) + block<<8, byPod: map[string]string{}}
}

// assign returns the Pod's IP, a new one (.2 to .254 in turn) the first time.
func (n *podNetwork) assign(pod string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ip, ok := n.byPod[pod]; ok {
		return ip
	}
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, n.base+2+n.next%253)
	n.next++
	n.byPod[pod] = ip.String()
	return ip.String()
}

func (n *podNetwork) release(pod string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.byPod, pod)
}
