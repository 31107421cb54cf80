package userdata

import (
	"fmt"
	"sort"
	"strings"
)

// The Windows-only kubelet flag: a priority class so the kubelet is not starved by pods. What
// Windows lacks (cgroups, node-allocatable enforcement, resolv.conf) is set in the kubelet
// configuration (windowsKubeletFields), like the CRI socket and the taints.
var windowsKubeletFlags = []Arg{
	{Name: "windows-priorityclass", Value: "ABOVE_NORMAL_PRIORITY_CLASS"},
}

// kubeletArgs is the kubelet service's command line. kubeadm writes config.yaml and the bootstrap
// kubeconfig and starts the service; the flags kubeadm would put in kubeadm-flags.env are set
// here, because a Windows service's command line is fixed when it is registered. Extra args
// override capwin's defaults of the same name.
func kubeletArgs(in *Input) []string {
	args := []Arg{
		{Name: "windows-service", Value: "true"},
		{Name: "config", Value: `C:\var\lib\kubelet\config.yaml`},
		{Name: "bootstrap-kubeconfig", Value: `C:\etc\kubernetes\bootstrap-kubelet.conf`},
		{Name: "kubeconfig", Value: `C:\etc\kubernetes\kubelet.conf`},
	}
	args = append(args, windowsKubeletFlags...)
	if in.NodeName != "" {
		args = append(args, Arg{Name: "hostname-override", Value: in.NodeName})
	}
	if len(in.Labels) > 0 {
		args = append(args, Arg{Name: "node-labels", Value: joinLabels(in.Labels)})
	}
	args = overrideArgs(args, in.KubeletExtraArgs)
	out := make([]string, 0, len(args))
	for _, a := range args {
		out = append(out, fmt.Sprintf("--%s=%s", a.Name, a.Value))
	}
	return out
}

// overrideArgs replaces defaults by name and appends the rest in the user's order.
func overrideArgs(defaults, extra []Arg) []Arg {
	index := map[string]int{}
	for i, a := range defaults {
		index[a.Name] = i
	}
	for _, a := range extra {
		if i, ok := index[a.Name]; ok {
			defaults[i].Value = a.Value
			continue
		}
		index[a.Name] = len(defaults)
		defaults = append(defaults, a)
	}
	return defaults
}

func joinLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}
