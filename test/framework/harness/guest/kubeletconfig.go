package guest

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// The kubelet's defaults for what the simulated node reports (v1beta1 defaulting, and
// pkg/kubelet/eviction/defaults_windows.go).
const defaultMaxPods = 110

var windowsEvictionHard = map[string]string{"memory.available": "500Mi", "nodefs.available": "10%", "imagefs.available": "15%"}

// loadKubeletConfig reads the kubelet's --config file as the kubelet does at start: a file it
// cannot decode stops it.
func (g *Guest) loadKubeletConfig(path string) (*kubeletv1beta1.KubeletConfiguration, error) {
	data, ok := g.fs.read(path)
	if !ok {
		return nil, fmt.Errorf("kubelet: failed to load kubelet config file %s: no such file", path)
	}
	cfg := &kubeletv1beta1.KubeletConfiguration{}
	if err := yaml.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("kubelet: failed to load kubelet config file %s: %w", path, err)
	}
	return cfg, nil
}

// resources are the node's capacity and allocatable as the kubelet computes them from its
// configuration: pods from maxPods (and podsPerCore); allocatable is capacity less
// systemReserved, kubeReserved and the hard eviction thresholds (memory.available for memory,
// nodefs.available for ephemeral storage; the defaults only where evictionHard is unset, or
// merged under it with mergeDefaultEvictionSettings).
func (k *kubelet) resources() (capacity, allocatable corev1.ResourceList) {
	cfg, vm := k.config, k.g.cfg
	pods := int64(cfg.MaxPods)
	if pods == 0 {
		pods = defaultMaxPods
	}
	if perCore := int64(cfg.PodsPerCore) * int64(vm.CPUs); perCore > 0 && perCore < pods {
		pods = perCore
	}
	capacity = corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(vm.CPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(int64(vm.MemoryMiB)<<20, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("40Gi"),
	}
	eviction := cfg.EvictionHard
	switch {
	case eviction == nil:
		eviction = windowsEvictionHard
	case ptr.Deref(cfg.MergeDefaultEvictionSettings, false):
		eviction = maps.Clone(eviction)
		for signal, value := range windowsEvictionHard {
			if _, ok := eviction[signal]; !ok {
				eviction[signal] = value
			}
		}
	}
	signals := map[corev1.ResourceName]string{corev1.ResourceMemory: "memory.available", corev1.ResourceEphemeralStorage: "nodefs.available"}
	allocatable = corev1.ResourceList{}
	for name, q := range capacity {
		avail := q.DeepCopy()
		for _, reserved := range []map[string]string{cfg.SystemReserved, cfg.KubeReserved} {
			avail.Sub(quantity(reserved[string(name)], q))
		}
		avail.Sub(quantity(eviction[signals[name]], q))
		if avail.Sign() < 0 {
			avail = *resource.NewQuantity(0, q.Format)
		}
		allocatable[name] = avail
	}
	return capacity, allocatable
}

// quantity reads a reservation or threshold: a quantity, or a percentage of capacity.
func quantity(value string, capacity resource.Quantity) resource.Quantity {
	if pct, ok := strings.CutSuffix(value, "%"); ok {
		f, _ := strconv.ParseFloat(pct, 64)
		return *resource.NewQuantity(int64(float64(capacity.Value())*f/100), capacity.Format)
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}
