package guest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"golang.org/x/mod/semver"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/capwin/capwin/test/framework/guestjoin"
)

// What the simulated Windows reports about itself.
const (
	containerRuntimeVersion = "containerd://1.7.27"
	// nodeStatusReportInterval is the kubelet's nodeStatusReportFrequency: with Leases, an
	// unchanged status is written only this often.
	nodeStatusReportInterval = 5 * time.Minute
)

// kubelet is the simulated kubelet, acting only with its node client certificate.
type kubelet struct {
	g       *Guest
	name    string
	version string
	flags   guestjoin.KubeletFlags
	// config is the kubelet's --config file as it read it at start.
	config  *kubeletv1beta1.KubeletConfiguration
	client  kubernetes.Interface
	nodeUID types.UID
	pods    podNetwork
	// machineID stands for the VM's identity, bootID for this power-on.
	machineID, bootID string

	// Used by the heartbeat goroutine only (and before it starts).
	lease      *coordinationv1.Lease
	lastStatus time.Time
}

// startKubelet does the TLS bootstrap and the registration within ctx (kubeadm join's
// deadline), then keeps the Lease and the Pods of the node going until the guest stops.
func (g *Guest) startKubelet(ctx context.Context, name, version string, flags guestjoin.KubeletFlags) error {
	g.kubeletSays('I', "server.go:525", "Kubelet version", "kubeletVersion", version)
	config, err := g.loadKubeletConfig(flags.Config)
	if err != nil {
		g.kubeletSays('E', "run.go:72", "command failed", "err", err.Error())
		return err
	}
	if err := g.serveKubelet(name, ptr.Deref(config.EnableSystemLogHandler, true), nodeLogQuery(config, version)); err != nil {
		return err
	}
	cfg, err := g.tlsBootstrap(ctx, name, flags)
	if err != nil {
		g.kubeletSays('E', "run.go:72", "command failed", "err", err.Error())
		return err
	}
	cfg.UserAgent = "kubelet/" + version + " (windows/amd64)"
	cfg.QPS, cfg.Burst = 50, 100 // the kubelet's kubeAPIQPS and kubeAPIBurst
	cs, closeConns, err := g.newClient(cfg)
	if err != nil {
		return err
	}
	g.keep(closeConns)
	k := &kubelet{g: g, name: name, version: version, flags: flags, config: config, client: cs, pods: newPodNetwork(),
		machineID: string(uuid.NewUUID()), bootID: string(uuid.NewUUID())}
	// The kubelet retries registration until it succeeds; rejections by admission or
	// authorisation will not change, so they end the join at once.
	for {
		err := k.register(ctx)
		if err == nil {
			break
		}
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || ctx.Err() != nil {
			return err
		}
		g.cfg.Log.V(1).Info("kubelet: registration failed; retrying", "err", err.Error())
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	g.kubeletSays('I', "kubelet_node_status.go:78", "Successfully registered node", "node", name)
	k.renewLease(ctx)
	g.spawn(func() { k.heartbeat(g.ctx) })
	g.runHealthChecker(name, cs)
	k.runPods(g.ctx)
	return nil
}

// register creates the Node as a kubelet does (labels, taints, status) or, if it exists (the
// guest rejoined under its old name), adopts it.
func (k *kubelet) register(ctx context.Context) error {
	nodes := k.client.CoreV1().Nodes()
	// kubeadm join on Windows taints nothing itself: the kubelet registers with the taints of
	// --register-with-taints or, without the flag, of its configuration's registerWithTaints.
	taints := k.flags.Taints
	if len(taints) == 0 {
		taints = k.config.RegisterWithTaints
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.name, Labels: k.labels()}, Spec: corev1.NodeSpec{Taints: taints}}
	node.Status = k.status(nil)
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = nodes.Get(ctx, k.name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("kubelet: unable to register node %q with the API server: %w", k.name, err)
	}
	k.nodeUID = created.UID
	return k.patchStatus(ctx, &created.Status)
}

// patchStatus writes the node status as a patch of the status subresource, as the kubelet
// does: an update would carry the whole Node, and NodeRestriction forbids a node to send taints
// that differ from the stored ones (the controller-manager adds and removes not-ready taints).
func (k *kubelet) patchStatus(ctx context.Context, old *corev1.NodeStatus) error {
	patch, err := json.Marshal(map[string]any{"status": k.status(old)})
	if err != nil {
		return err
	}
	// A strategic merge patch, as the kubelet's: conditions merge by type, so those other agents
	// set (the node health checker's) stay.
	_, err = k.client.CoreV1().Nodes().Patch(ctx, k.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err == nil {
		k.lastStatus = time.Now()
	}
	return err
}

// labels are --node-labels plus the ones a Windows kubelet always sets.
func (k *kubelet) labels() map[string]string {
	l := map[string]string{}
	for key, v := range k.flags.NodeLabels {
		l[key] = v
	}
	l[corev1.LabelHostname] = k.name
	l[corev1.LabelOSStable] = "windows"
	l[corev1.LabelArchStable] = "amd64"
	l["beta.kubernetes.io/os"] = "windows"
	l["beta.kubernetes.io/arch"] = "amd64"
	l[corev1.LabelWindowsBuild] = "10.0." + strconv.Itoa(int(k.g.cfg.Build))
	return l
}

// status is the kubelet's node status; conditions keep their transition times when unchanged.
func (k *kubelet) status(old *corev1.NodeStatus) corev1.NodeStatus {
	cfg := k.g.cfg
	capacity, allocatable := k.resources()
	now := metav1.Now()
	condition := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
		if old != nil {
			for _, o := range old.Conditions {
				if o.Type == t && o.Status == s {
					c.LastTransitionTime = o.LastTransitionTime
				}
			}
		}
		return c
	}
	build := int(cfg.Build)
	return corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: allocatable,
		Conditions: []corev1.NodeCondition{
			condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: cfg.Address},
			{Type: corev1.NodeHostName, Address: k.name},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               k.machineID,
			SystemUUID:              k.machineID,
			BootID:                  k.bootID,
			OperatingSystem:         "windows",
			Architecture:            "amd64",
			OSImage:                 osImage(build),
			KernelVersion:           fmt.Sprintf("10.0.%d.%d", build, ubr(build)),
			KubeletVersion:          k.version,
			ContainerRuntimeVersion: containerRuntimeVersion,
		},
	}
}

func osImage(build int) string {
	switch build {
	case osversion.LTSC2022:
		return "Windows Server 2022 Datacenter"
	case osversion.LTSC2025:
		return "Windows Server 2025 Datacenter"
	}
	return "Windows Server Datacenter"
}

// ubr is the update build revision a patched image of that build reports.
func ubr(build int) int {
	switch build {
	case osversion.LTSC2022:
		return 3692
	case osversion.LTSC2025:
		return 4061
	}
	return 1
}

// kubeletSays writes a line of the kubelet's to its log, where its service keeps it.
func (g *Guest) kubeletSays(severity byte, file, msg string, kv ...string) {
	g.mu.Lock()
	l := g.kubeletLog
	g.mu.Unlock()
	l.write(klog(severity, file, msg, kv...))
}

// nodeLogQuery says whether the kubelet answers Node Log Query: its configuration asks for it and
// the NodeLogQuery feature gate is on (by default from v1.36).
func nodeLogQuery(cfg *kubeletv1beta1.KubeletConfiguration, version string) bool {
	if !ptr.Deref(cfg.EnableSystemLogQuery, false) {
		return false
	}
	if on, set := cfg.FeatureGates["NodeLogQuery"]; set {
		return on
	}
	return semver.Compare(semver.MajorMinor(version), "v1.36") >= 0
}
