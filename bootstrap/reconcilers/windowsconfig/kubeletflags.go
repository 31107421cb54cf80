package windowsconfig

import (
	"strings"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/kubeletflags"
)

// KubeletFlagRefusal says which of nodeRegistration.kubeletExtraArgs the kubelet of a Kubernetes
// version lacks ("" when it has them all). Admission only knows that some supported kubelet has
// each flag; this kubelet would exit with "unknown flag" and the node would never join. The
// reconciler and the render command refuse to render for it.
func KubeletFlagRefusal(spec *bootstrapv1.WindowsConfigSpec, version string) string {
	var out []string
	for _, a := range spec.NodeRegistration.KubeletExtraArgs {
		if msg := kubeletflags.Refusal(version, a.Name); msg != "" {
			out = append(out, msg)
		}
	}
	return strings.Join(out, "; ")
}
