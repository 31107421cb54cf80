package guest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// testKubeletConfiguration: in both formats, kubeadm join merges the node's kubelet settings
// over the cluster's kubelet-config, and the kubelet's Node shows them: capacity pods from
// maxPods, allocatable less the reservations and the hard eviction threshold.
func (f *fixture) testKubeletConfiguration(t *testing.T) {
	t.Parallel()
	for format, name := range map[userdata.Format]string{userdata.FormatCloudConfig: "win-kc-cc", userdata.FormatPowerShell: "win-kc-ps"} {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			g, _ := f.boot(t, node{format: format, name: name, token: createToken(t, f.cs, 15*time.Minute),
				kubeletConfig: `{"maxPods": 60, "systemReserved": {"memory": "1Gi"}, "kubeReserved": {"cpu": "500m", "memory": "256Mi"},
					"evictionHard": {"memory.available": "768Mi"}}`},
				osversion.LTSC2022, guest.Faults{}, time.Minute)
			waitDone(t, g, 90*time.Second)
			if err := g.Err(); err != nil {
				t.Fatalf("join: %v", err)
			}
			n, err := f.cs.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for list, want := range map[string]map[corev1.ResourceName]string{
				"capacity":    {corev1.ResourcePods: "60", corev1.ResourceMemory: "4Gi", corev1.ResourceCPU: "2"},
				"allocatable": {corev1.ResourcePods: "60", corev1.ResourceMemory: "2Gi", corev1.ResourceCPU: "1500m", corev1.ResourceEphemeralStorage: "40Gi"},
			} {
				got := map[string]corev1.ResourceList{"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable}[list]
				for r, q := range want {
					if v := got[r]; v.Cmp(resource.MustParse(q)) != 0 {
						t.Errorf("%s %s = %s, want %s", list, r, v.String(), q)
					}
				}
			}
			checkEffectiveConfig(t, g)
		})
	}
}

// checkEffectiveConfig reads the kubelet's config.yaml: the cluster's settings stay, the node's
// are merged over them, and the bootstrap log shows kubeadm applying the patch.
func checkEffectiveConfig(t *testing.T, g *guest.Guest) {
	t.Helper()
	data, ok := g.File(`C:\var\lib\kubelet\config.yaml`)
	cfg := &kubeletv1beta1.KubeletConfiguration{}
	if err := yaml.UnmarshalStrict(data, cfg); !ok || err != nil {
		t.Fatalf("config.yaml: %v (present %v)", err, ok)
	}
	if cfg.MaxPods != 60 || cfg.SystemReserved["memory"] != "1Gi" || cfg.KubeReserved["cpu"] != "500m" ||
		len(cfg.EvictionHard) != 1 || cfg.EvictionHard["memory.available"] != "768Mi" {
		t.Errorf("the node's settings are not in config.yaml:\n%s", data)
	}
	if len(cfg.ClusterDNS) == 0 || cfg.ClusterDomain == "" || !ptr.Deref(cfg.Authentication.Webhook.Enabled, false) {
		t.Errorf("the cluster's kubelet-config was not kept:\n%s", data)
	}
	log, _ := g.File(userdata.LogFile)
	if !strings.Contains(string(log), `[patches] Applied patch of type "application/merge-patch+json" to target "kubeletconfiguration"`) {
		t.Errorf("kubeadm applied no patch:\n%s", log)
	}
}
