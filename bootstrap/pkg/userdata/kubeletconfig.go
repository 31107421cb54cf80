package userdata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Where kubeadm join finds the node's own kubelet settings: JoinConfiguration.patches.directory
// names the folder, and the file is a JSON merge patch of kubeadm's kubeletconfiguration target
// ("target[suffix][+patchtype].extension"), applied to the cluster's kubelet-config before kubeadm
// writes C:\var\lib\kubelet\config.yaml.
const (
	KubeadmPatchesDir = StateDir + `\kubeadm-patches`
	KubeletPatchPath  = KubeadmPatchesDir + `\kubeletconfiguration+merge.json`
)

// windowsKubeletFields are the KubeletConfiguration fields every capwin node gets in its patch
// (they were command-line flags, deprecated in favour of the configuration file): capwin's CRI
// socket, the node's taints, and what Windows lacks: cgroups, node-allocatable enforcement
// ("none": an empty list would be defaulted back to "pods", which a Windows kubelet refuses) and
// resolv.conf.
func windowsKubeletFields(in *Input) map[string]any {
	fields := map[string]any{
		"containerRuntimeEndpoint": in.Join.CRISocket,
		"cgroupsPerQOS":            false,
		"enforceNodeAllocatable":   []string{"none"},
		"resolvConf":               "",
	}
	if len(in.Taints) > 0 {
		taints := make([]map[string]string, 0, len(in.Taints))
		for _, t := range in.Taints {
			taint := map[string]string{"key": t.Key, "effect": t.Effect}
			if t.Value != "" {
				taint["value"] = t.Value
			}
			taints = append(taints, taint)
		}
		fields["registerWithTaints"] = taints
	}
	return fields
}

var errFeatureGates = errors.New("kubeletConfiguration.featureGates is not a JSON object")

// withKubeletPatch makes the patch file from capwin's fields and Input.KubeletConfiguration (the
// user's fields; admission refuses the ones capwin sets, and capwin's win here; capwin's defaults,
// Node Log Query's, give way to the user's), written with the
// user's files before the join (by cloudbase-init's write_files or by the script).
func withKubeletPatch(in *Input) error {
	fields := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(in.KubeletConfiguration)) > 0 {
		if err := json.Unmarshal(in.KubeletConfiguration, &fields); err != nil {
			return fmt.Errorf("kubeletConfiguration is not a JSON object: %w", err)
		}
		if fields == nil {
			return errors.New("kubeletConfiguration is not a JSON object: null")
		}
	}
	defaults, err := nodeLogQueryFields(in, fields)
	if err != nil {
		return err
	}
	for k, v := range defaults {
		fields[k] = v
	}
	for k, v := range windowsKubeletFields(in) {
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fields[k] = raw
	}
	// Compact, keys sorted: the same input gives the same bytes.
	patch, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("kubeletConfiguration: %w", err)
	}
	in.KubeletConfiguration = patch
	// A new slice: the caller's Files stay as they were.
	in.Files = append(slices.Clip(in.Files), File{Path: KubeletPatchPath, Content: string(patch)})
	return nil
}
