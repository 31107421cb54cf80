package userdata

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
	"sigs.k8s.io/yaml"
)

// joinConfig marshals the kubeadm JoinConfiguration from kubeadm's own v1beta4 types, so the
// YAML is exactly what kubeadm parses.
func joinConfig(in *Input) (string, error) {
	taints := make([]corev1.Taint, 0, len(in.Taints))
	for _, t := range in.Taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	cfg := upstreamv1beta4.JoinConfiguration{
		NodeRegistration: upstreamv1beta4.NodeRegistrationOptions{
			Name:                  in.NodeName,
			CRISocket:             in.Join.CRISocket,
			Taints:                taints,
			IgnorePreflightErrors: in.Join.IgnorePreflightErrors,
		},
		Discovery: upstreamv1beta4.Discovery{
			BootstrapToken: &upstreamv1beta4.BootstrapTokenDiscovery{
				Token:             in.Join.Token,
				APIServerEndpoint: in.Join.APIServerEndpoint,
				CACertHashes:      in.Join.CACertHashes,
			},
		},
	}
	// capwin's kubelet configuration patch (withKubeletPatch) is always there.
	cfg.Patches = &upstreamv1beta4.Patches{Directory: KubeadmPatchesDir}
	cfg.APIVersion = upstreamv1beta4.GroupVersion.String()
	cfg.Kind = "JoinConfiguration"
	out, err := yaml.Marshal(&cfg)
	if err != nil {
		return "", fmt.Errorf("marshal JoinConfiguration: %w", err)
	}
	return string(out), nil
}
