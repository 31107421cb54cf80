package webhooks

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// refusedKubeletFields are the KubeletConfiguration fields spec.kubeletConfiguration may not set,
// with the reason an operator reads. capwin sets the first five itself, in the same patch
// (windowsKubeletFields in bootstrap/pkg/userdata), from other fields or because Windows needs them.
var refusedKubeletFields = map[string]string{
	"containerRuntimeEndpoint": "capwin sets it from spec.nodeRegistration.criSocket; set criSocket instead",
	"registerWithTaints":       "capwin sets it from spec.nodeRegistration.taints; set taints instead",
	"cgroupsPerQOS":            "Windows has no cgroups: capwin sets cgroupsPerQOS: false",
	"enforceNodeAllocatable":   `Windows does not enforce node allocatable: capwin sets enforceNodeAllocatable: ["none"] (systemReserved and kubeReserved still lower the Node's allocatable)`,
	"resolvConf":               `Windows has no resolv.conf: capwin sets resolvConf: ""`,
	"authentication":           "set cluster-wide by kubeadm's kubelet-config: the API server reaches every kubelet with it (logs, exec, metrics)",
	"authorization":            "set cluster-wide by kubeadm's kubelet-config: the API server reaches every kubelet with it (logs, exec, metrics)",
	"cgroupRoot":               noCgroups,
	"cgroupDriver":             noCgroups,
	"kubeletCgroups":           noCgroups,
	"systemCgroups":            noCgroups,
	"kubeReservedCgroup":       noCgroups,
	"systemReservedCgroup":     noCgroups,
	"failCgroupV1":             noCgroups,
	"cpuCFSQuota":              "Linux only (the CFS scheduler): Windows caps a container's CPU through its job object",
	"cpuCFSQuotaPeriod":        "Linux only (the CFS scheduler): Windows caps a container's CPU through its job object",
	"memoryThrottlingFactor":   "Linux only (cgroup v2 memory QoS)",
	"singleProcessOOMKill":     "Linux only (the OOM killer): a Windows kubelet refuses to start with it",
	"userNamespaces":           "Linux only: a Windows kubelet refuses to start with it",
	"oomScoreAdj":              "Linux only (the OOM killer)",
	"failSwapOn":               "Linux only (swap)",
	"memorySwap":               "Linux only (swap)",
	"protectKernelDefaults":    "Linux only (kernel sysctls)",
	"allowedUnsafeSysctls":     "Linux only (sysctls)",
	"kernelMemcgNotification":  "Linux only (memory cgroup notifications)",
	"seccompDefault":           "Linux only (seccomp)",
	"makeIPTablesUtilChains":   "Linux only (iptables)",
	"iptablesMasqueradeBit":    "Linux only (iptables)",
	"iptablesDropBit":          "Linux only (iptables)",
}

const noCgroups = "Windows has no cgroups: the Windows kubelet ignores it"

// reservableResources are what the kubelet accepts in systemReserved and kubeReserved.
var reservableResources = []string{"cpu", "memory", "ephemeral-storage", "pid"}

// evictionSignals are the kubelet's eviction signals, with why a Windows node cannot use some.
var evictionSignals = map[string]string{
	"memory.available":            "",
	"nodefs.available":            "",
	"imagefs.available":           "",
	"containerfs.available":       "",
	"pid.available":               "",
	"nodefs.inodesFree":           noInodes,
	"imagefs.inodesFree":          noInodes,
	"containerfs.inodesFree":      noInodes,
	"allocatableMemory.available": "needs node allocatable enforcement, which Windows does not have",
}

const noInodes = "Windows file systems report no inodes, so the threshold would never be reached"

// kubeletFlagFields are the kubelet flags whose configuration field is not the flag's name in
// camel case (the kubelet's AddKubeletConfigFlags).
var kubeletFlagFields = map[string]string{
	"image-gc-high-threshold":    "imageGCHighThresholdPercent",
	"image-gc-low-threshold":     "imageGCLowThresholdPercent",
	"pod-max-pids":               "podPidsLimit",
	"pod-manifest-path":          "staticPodPath",
	"manifest-url":               "staticPodURL",
	"manifest-url-header":        "staticPodURLHeader",
	"rotate-server-certificates": "serverTLSBootstrap",
	"registry-qps":               "registryPullQPS",
	"event-qps":                  "eventRecordQPS",
	"reserved-cpus":              "reservedSystemCPUs",
	"v":                          "logging",
	"vmodule":                    "logging",
	"log-flush-frequency":        "logging",
}

// kubeletFlagConflicts refuses a field that a flag of nodeRegistration.kubeletExtraArgs sets too:
// the kubelet's command line wins over its configuration file, so the field would be ignored.
func kubeletFlagConflicts(fields map[string]json.RawMessage, args []bootstrapv1.Arg, p, argsPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, a := range args {
		name := kubeletConfigField(a.Name)
		if name != "" && isSet(fields, name) {
			errs = append(errs, field.Invalid(p.Child(name), field.OmitValueType{}, fmt.Sprintf(
				"%s sets it too (--%s), and the kubelet's command line wins over its configuration file; set it in one place",
				argsPath.Index(i), a.Name)))
		}
	}
	return errs
}

// configFields maps a KubeletConfiguration JSON field name, lower-cased, to the name.
var configFields = func() map[string]string {
	out := map[string]string{}
	t := reflect.TypeFor[kubeletv1beta1.KubeletConfiguration]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" {
			out[strings.ToLower(name)] = name
		}
	}
	return out
}()

// kubeletConfigField is the configuration field a kubelet flag sets ("" if none): max-pods sets
// maxPods, image-gc-high-threshold sets imageGCHighThresholdPercent.
func kubeletConfigField(flag string) string {
	if name, ok := kubeletFlagFields[flag]; ok {
		return name
	}
	return configFields[strings.ReplaceAll(flag, "-", "")]
}
