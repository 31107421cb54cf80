package guest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// TestResources: the Node's capacity and allocatable follow the kubelet's configuration, with
// the Windows kubelet's eviction defaults when the configuration has none.
func TestResources(t *testing.T) {
	vm := &Guest{cfg: Config{CPUs: 4, MemoryMiB: 8192}}
	cases := []struct {
		name   string
		config kubeletv1beta1.KubeletConfiguration
		want   map[corev1.ResourceName][2]string // capacity, allocatable
	}{
		{"kubeadm's defaults", kubeletv1beta1.KubeletConfiguration{}, map[corev1.ResourceName][2]string{
			corev1.ResourcePods: {"110", "110"}, corev1.ResourceMemory: {"8Gi", "7692Mi"}, corev1.ResourceEphemeralStorage: {"40Gi", "36Gi"},
			corev1.ResourceCPU: {"4", "4"},
		}},
		{"reservations and thresholds", kubeletv1beta1.KubeletConfiguration{
			MaxPods: 250, PodsPerCore: 20, SystemReserved: map[string]string{"cpu": "1", "memory": "1Gi"},
			KubeReserved: map[string]string{"cpu": "500m", "ephemeral-storage": "2Gi"},
			EvictionHard: map[string]string{"memory.available": "25%", "nodefs.available": "20Gi"},
		}, map[corev1.ResourceName][2]string{
			corev1.ResourcePods: {"80", "80"}, corev1.ResourceMemory: {"8Gi", "5Gi"}, corev1.ResourceEphemeralStorage: {"40Gi", "18Gi"},
			corev1.ResourceCPU: {"4", "2500m"},
		}},
		{"defaults merged under a threshold", kubeletv1beta1.KubeletConfiguration{MergeDefaultEvictionSettings: ptr.To(true),
			EvictionHard: map[string]string{"memory.available": "1Gi"}}, map[corev1.ResourceName][2]string{
			corev1.ResourceMemory: {"8Gi", "7Gi"}, corev1.ResourceEphemeralStorage: {"40Gi", "36Gi"},
		}},
		{"a threshold without the defaults", kubeletv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "1Gi"}},
			map[corev1.ResourceName][2]string{corev1.ResourceEphemeralStorage: {"40Gi", "40Gi"}}},
		{"never below zero", kubeletv1beta1.KubeletConfiguration{SystemReserved: map[string]string{"cpu": "8"}}, map[corev1.ResourceName][2]string{
			corev1.ResourceCPU: {"4", "0"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := &kubelet{g: vm, config: &tc.config}
			capacity, allocatable := k.resources()
			for r, want := range tc.want {
				for i, list := range []corev1.ResourceList{capacity, allocatable} {
					if got := list[r]; got.Cmp(resource.MustParse(want[i])) != 0 {
						t.Errorf("%s[%d] = %s, want %s", r, i, got.String(), want[i])
					}
				}
			}
		})
	}
}
