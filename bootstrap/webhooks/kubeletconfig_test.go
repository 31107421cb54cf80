package webhooks

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

func kubeletConfig(patch string) spec {
	return func(s *bootstrapv1.WindowsConfigSpec) {
		s.KubeletConfiguration = &runtime.RawExtension{Raw: []byte(patch)}
	}
}

// TestValidateKubeletConfiguration: each row's errors, by field below spec and a word of the
// message; no field means accepted.
func TestValidateKubeletConfiguration(t *testing.T) {
	cases := []struct {
		name   string
		mutate []spec
		field  string
		msg    string
	}{
		{"the fields operators set most", []spec{kubeletConfig(`{"maxPods": 60, "systemReserved": {"cpu": "500m", "memory": "1Gi"},
			"kubeReserved": {"memory": "512Mi", "ephemeral-storage": "1Gi"}, "evictionHard": {"memory.available": "600Mi", "nodefs.available": "10%"},
			"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "90s"},
			"imageGCHighThresholdPercent": 80, "imageGCLowThresholdPercent": 60, "serializeImagePulls": false,
			"containerLogMaxSize": "50Mi", "featureGates": {"WindowsGracefulNodeShutdown": true},
			"logging": {"verbosity": 2}, "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}`)}, "", ""},
		{"empty object", []spec{kubeletConfig(`{}`)}, "", ""},
		{"null removes the cluster's value", []spec{kubeletConfig(`{"evictionHard": {"nodefs.available": null}, "maxPods": null}`)}, "", ""},
		{"unknown field", []spec{kubeletConfig(`{"fooBar": 1}`)}, "kubeletConfiguration.fooBar", "unknown field"},
		{"names are case-sensitive", []spec{kubeletConfig(`{"MaxPods": 60}`)}, "kubeletConfiguration.MaxPods", "case-sensitive"},
		{"unknown nested field", []spec{kubeletConfig(`{"logging": {"verbosity": 2, "colour": true}}`)}, "kubeletConfiguration.logging.colour", "unknown field"},
		{"nested field twice", []spec{kubeletConfig(`{"logging": {"verbosity": 2, "verbosity": 4}}`)}, "kubeletConfiguration.logging.verbosity", "set twice"},
		{"wrong type", []spec{kubeletConfig(`{"maxPods": "sixty"}`)}, "kubeletConfiguration.maxPods", "reads it as int32, not as a JSON string"},
		{"bad duration", []spec{kubeletConfig(`{"imageMinimumGCAge": "two minutes"}`)}, "kubeletConfiguration.imageMinimumGCAge", "cannot read it"},
		{"not an object", []spec{kubeletConfig(`[1]`)}, "kubeletConfiguration", "must be an object"},
		{"other apiVersion", []spec{kubeletConfig(`{"apiVersion": "kubelet.config.k8s.io/v1"}`)}, "kubeletConfiguration.apiVersion", "leave it out"},
		{"no pods", []spec{kubeletConfig(`{"maxPods": 0}`)}, "kubeletConfiguration.maxPods", "at least 1"},
		{"image GC above 100", []spec{kubeletConfig(`{"imageGCHighThresholdPercent": 101}`)}, "kubeletConfiguration.imageGCHighThresholdPercent", "between 0 and 100"},
		{"image GC low above high", []spec{kubeletConfig(`{"imageGCHighThresholdPercent": 70, "imageGCLowThresholdPercent": 75}`)}, "kubeletConfiguration.imageGCLowThresholdPercent", "less than"},
		{"reserved resource the kubelet cannot reserve", []spec{kubeletConfig(`{"systemReserved": {"gpu": "1"}}`)}, "kubeletConfiguration.systemReserved[gpu]", "supported values"},
		{"reserved quantity", []spec{kubeletConfig(`{"kubeReserved": {"memory": "a lot"}}`)}, "kubeletConfiguration.kubeReserved[memory]", "quantity"},
		{"negative reserved", []spec{kubeletConfig(`{"kubeReserved": {"cpu": "-1"}}`)}, "kubeletConfiguration.kubeReserved[cpu]", "non-negative"},
		{"unknown eviction signal", []spec{kubeletConfig(`{"evictionHard": {"memory.free": "1Gi"}}`)}, "kubeletConfiguration.evictionHard[memory.free]", "supported values"},
		{"inodes on Windows", []spec{kubeletConfig(`{"evictionHard": {"nodefs.inodesFree": "5%"}}`)}, "kubeletConfiguration.evictionHard[nodefs.inodesFree]", "no inodes"},
		{"percentage above 100", []spec{kubeletConfig(`{"evictionHard": {"nodefs.available": "110%"}}`)}, "kubeletConfiguration.evictionHard[nodefs.available]", "between 0% and 100%"},
		{"threshold not a quantity", []spec{kubeletConfig(`{"evictionMinimumReclaim": {"memory.available": "lots"}}`)}, "kubeletConfiguration.evictionMinimumReclaim[memory.available]", "quantity"},
		{"soft eviction without grace period", []spec{kubeletConfig(`{"evictionSoft": {"memory.available": "1Gi"}}`)}, "kubeletConfiguration.evictionSoftGracePeriod[memory.available]", "grace period"},
		{"grace period not a duration", []spec{kubeletConfig(`{"evictionSoftGracePeriod": {"memory.available": "soon"}}`)}, "kubeletConfiguration.evictionSoftGracePeriod[memory.available]", "duration"},
		{"cgroups", []spec{kubeletConfig(`{"cgroupDriver": "systemd"}`)}, "kubeletConfiguration.cgroupDriver", "no cgroups"},
		{"Linux only", []spec{kubeletConfig(`{"singleProcessOOMKill": true}`)}, "kubeletConfiguration.singleProcessOOMKill", "refuses to start"},
		{"capwin sets it", []spec{kubeletConfig(`{"cgroupsPerQOS": true}`)}, "kubeletConfiguration.cgroupsPerQOS", "capwin sets cgroupsPerQOS: false"},
		{"criSocket owns the endpoint", []spec{kubeletConfig(`{"containerRuntimeEndpoint": "npipe:////./pipe/x"}`)}, "kubeletConfiguration.containerRuntimeEndpoint", "spec.nodeRegistration.criSocket"},
		{"taints own registerWithTaints", []spec{kubeletConfig(`{"registerWithTaints": []}`)}, "kubeletConfiguration.registerWithTaints", "spec.nodeRegistration.taints"},
		{"cluster-wide authentication", []spec{kubeletConfig(`{"authentication": {"anonymous": {"enabled": true}}}`)}, "kubeletConfiguration.authentication", "cluster-wide"},
		{"a flag sets it too", []spec{kubeletConfig(`{"maxPods": 60}`), kubeletArgs("max-pods", "50")}, "kubeletConfiguration.maxPods",
			"spec.nodeRegistration.kubeletExtraArgs[0] sets it too (--max-pods)"},
		{"a flag with another name sets it too", []spec{kubeletConfig(`{"imageGCHighThresholdPercent": 90}`), kubeletArgs("v", "2", "image-gc-high-threshold", "95")},
			"kubeletConfiguration.imageGCHighThresholdPercent", "kubeletExtraArgs[1] sets it too"},
		{"flags for other fields", []spec{kubeletConfig(`{"maxPods": 60}`), kubeletArgs("v", "2", "node-ip", "10.0.0.5")}, "", ""},
		{"capwin's patch file", []spec{files(`C:/var/lib/capwin/Kubeadm-Patches/kubeletconfiguration+merge.json`)}, "files[0].path", "spec.kubeletConfiguration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := &bootstrapv1.WindowsConfigSpec{}
			DefaultSpec(s)
			for _, m := range tc.mutate {
				m(s)
			}
			errs := ValidateSpec(s, field.NewPath("spec"))
			if tc.field == "" {
				g.Expect(errs).To(BeEmpty())
				return
			}
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
			}
			g.Expect(fields).To(ContainElement("spec."+tc.field), "%v", errs)
			g.Expect(errs.ToAggregate().Error()).To(ContainSubstring(tc.msg))
		})
	}
}

func TestKubeletErrorsAreInOrder(t *testing.T) {
	g := NewWithT(t)
	s := &bootstrapv1.WindowsConfigSpec{}
	kubeletConfig(`{"evictionHard": {"z.free": "1", "a.free": "1", "nodefs.inodesFree": "1"}, "systemReserved": {"b": "1", "a": "1"}}`)(s)
	first := ValidateSpec(s, field.NewPath("spec")).ToAggregate().Error()
	for range 20 {
		g.Expect(ValidateSpec(s, field.NewPath("spec")).ToAggregate().Error()).To(Equal(first), "the condition message must not change between reconciles")
	}
}

func TestKubeletConfigField(t *testing.T) {
	g := NewWithT(t)
	for flag, want := range map[string]string{
		"max-pods": "maxPods", "eviction-hard": "evictionHard", "system-reserved": "systemReserved", "kube-api-qps": "kubeAPIQPS",
		"image-minimum-gc-age": "imageMinimumGCAge", "image-gc-low-threshold": "imageGCLowThresholdPercent", "cpu-cfs-quota": "cpuCFSQuota",
		"node-ip": "", "node-labels": "", "windows-priorityclass": "",
	} {
		g.Expect(kubeletConfigField(flag)).To(Equal(want), flag)
	}
}
