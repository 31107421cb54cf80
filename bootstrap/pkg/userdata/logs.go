package userdata

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/version"
)

// Where a node keeps its logs. C:\var\log is the kubelet's node log directory: Node Log Query
// (GET /api/v1/nodes/<node>/proxy/logs/...) serves the files below it, and "?query=kubelet" finds
// kubelet\kubelet.log when no event log source is named kubelet.
const (
	KubeletLogFile    = `C:\var\log\kubelet\kubelet.log`
	ContainerdLogFile = `C:\var\log\containerd\containerd.log`
	// KubeLogRunner is the kubelet service's wrapper, in the binaries folder (image-builder's
	// images have it there; spec.binaries.kubeLogRunner downloads it there).
	KubeLogRunner = "kube-log-runner.exe"
	// The kubelet's log is rotated when it reaches KubeletLogSize, and rotated files older than
	// KubeletLogAge are removed (kube-log-runner's flags since Kubernetes v1.34).
	KubeletLogSize = "100Mi"
	KubeletLogAge  = "168h"
)

// containerd's log is rotated by capwin's scheduled task (containerd never rotates its
// --log-file), and so is the kubelet's where kube-log-runner cannot (before v1.34): past
// ContainerdLogBytes, checked every LogRotationMinutes; rotated files are kept as long as the
// kubelet's. Both programs append to their files, so a copy and truncation in place is safe.
const (
	LogRotationTask    = "capwin-log-rotation"
	ContainerdLogBytes = 100 << 20
	LogRotationMinutes = 15
	logRotationAge     = 168
)

//go:embed ps/rotate-logs.ps1
var rotateLogsScript []byte

// RotateLogsScript is the static log rotation script (for syntax checks and the simulated guest).
func RotateLogsScript() []byte { return rotateLogsScript }

// logRotation is the rotation of containerd's log, and of the kubelet's before v1.34.
func logRotation(in *Input) DocLogRotation {
	files := []string{ContainerdLogFile}
	if !minorAtLeast(in.KubernetesVersion, 34) {
		files = append(files, KubeletLogFile)
	}
	return DocLogRotation{Task: LogRotationTask, ScriptPath: StateDir + `\rotate-logs.ps1`,
		Script: base64.StdEncoding.EncodeToString(rotateLogsScript), ConfigPath: StateDir + `\rotate-logs.json`,
		Files: files, MaxBytes: ContainerdLogBytes, MaxAgeHours: logRotationAge, IntervalMinutes: LogRotationMinutes}
}

// kubeLogRunner is how the kubelet service runs under kube-log-runner: the kubelet has had no
// log file flag since v1.26, and a Windows service's output goes nowhere. kube-log-runner before
// v1.34 knows no rotation flags and exits on them (the kubelet would never start), so they are
// given only for a known version that has them.
func kubeLogRunner(in *Input) DocLogRunner {
	args := []string{"--log-file=" + KubeletLogFile}
	if minorAtLeast(in.KubernetesVersion, 34) {
		args = append(args, "--log-file-size="+KubeletLogSize, "--log-file-age="+KubeletLogAge)
	}
	return DocLogRunner{Binary: in.Binaries.Directory + `\` + KubeLogRunner, Args: args, LogFile: KubeletLogFile}
}

// minorAtLeast says whether v (e.g. "v1.36.3") is a 1.x release with x >= minor; an empty or
// unreadable version is not.
func minorAtLeast(v string, minor uint) bool {
	parsed, err := version.ParseGeneric(v)
	if err != nil {
		return false
	}
	return parsed.AtLeast(version.MajorMinor(1, minor))
}

// nodeLogQueryFields turn on Node Log Query (kubectl get --raw
// /api/v1/nodes/<node>/proxy/logs/?query=kubelet) where the kubelet has it: its NodeLogQuery
// feature gate is off by default from v1.27 to v1.35, on and locked from v1.36, and removed in
// v1.39 (naming it then stops the kubelet). They are defaults: the user's kubeletConfiguration
// wins, and a user who turns the log handler off does not get the query turned on.
func nodeLogQueryFields(in *Input, user map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if !minorAtLeast(in.KubernetesVersion, 27) {
		return out, nil
	}
	if _, set := user["enableSystemLogQuery"]; !set && string(user["enableSystemLogHandler"]) != "false" {
		out["enableSystemLogQuery"] = json.RawMessage("true")
	}
	if minorAtLeast(in.KubernetesVersion, 36) {
		return out, nil
	}
	gates := map[string]json.RawMessage{}
	if raw, set := user["featureGates"]; set {
		if err := json.Unmarshal(raw, &gates); err != nil || gates == nil {
			return nil, errFeatureGates
		}
	}
	if _, set := gates["NodeLogQuery"]; !set {
		gates["NodeLogQuery"] = json.RawMessage("true")
		raw, err := json.Marshal(gates)
		if err != nil {
			return nil, err
		}
		out["featureGates"] = raw
	}
	return out, nil
}
