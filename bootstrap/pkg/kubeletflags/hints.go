package kubeletflags

// replacements say what to set instead of a flag that some supported kubelets no longer have:
// a capwin field or a kubeletConfiguration field. TestReplacementsAreForRemovedFlags keeps the
// table to flags that some supported kubelet has and some lacks.
var replacements = map[string]string{
	"pod-infra-container-image": "containerd pulls the pause image of spec.containerd.pauseImage",
	"register-schedulable":      "register the node with the taint node.kubernetes.io/unschedulable:NoSchedule in spec.nodeRegistration.taints instead",
	"cloud-config":              "the kubelet has no in-tree cloud providers; an external cloud provider (--cloud-provider=external) reads its own configuration",
}

// hint is ": " and the replacement of a flag, or "" when capwin knows none.
func hint(name string) string {
	if r, ok := replacements[normalize(name)]; ok {
		return ": " + r
	}
	return ""
}
