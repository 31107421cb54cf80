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

// withKubeletPatch turns Input.KubeletConfiguration into the patch file, written with the user's
// files before the join (by cloudbase-init's write_files or by the script). An empty object is no
// patch: KubeletConfiguration is then nil, and the JoinConfiguration names no patch directory.
func withKubeletPatch(in *Input) error {
	if len(in.KubeletConfiguration) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(in.KubeletConfiguration, &fields); err != nil {
		return fmt.Errorf("kubeletConfiguration is not a JSON object: %w", err)
	}
	if fields == nil {
		return errors.New("kubeletConfiguration is not a JSON object: null")
	}
	if len(fields) == 0 {
		in.KubeletConfiguration = nil
		return nil
	}
	var patch bytes.Buffer
	if err := json.Compact(&patch, in.KubeletConfiguration); err != nil {
		return fmt.Errorf("kubeletConfiguration: %w", err)
	}
	// A new slice: the caller's Files stay as they were.
	in.Files = append(slices.Clip(in.Files), File{Path: KubeletPatchPath, Content: patch.String()})
	return nil
}
