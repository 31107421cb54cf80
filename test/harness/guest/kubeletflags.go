package guest

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// kubeletFlags is what the simulated kubelet takes from its service command line.
type kubeletFlags struct {
	hostnameOverride    string
	nodeLabels          map[string]string
	taints              []corev1.Taint
	config              string // KubeletConfiguration written by kubeadm join
	kubeconfig          string // written by the kubelet after its TLS bootstrap
	bootstrapKubeconfig string // written by kubeadm join, removed after the TLS bootstrap
	certDir             string
}

// parseKubeletFlags reads "--name=value" flags; the defaults are the kubelet's on Windows.
func parseKubeletFlags(args []string) (kubeletFlags, error) {
	f := kubeletFlags{
		config:              `C:\var\lib\kubelet\config.yaml`,
		kubeconfig:          `C:\etc\kubernetes\kubelet.conf`,
		bootstrapKubeconfig: `C:\etc\kubernetes\bootstrap-kubelet.conf`,
		certDir:             `C:\var\lib\kubelet\pki`,
		nodeLabels:          map[string]string{},
	}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch name {
		case "hostname-override":
			f.hostnameOverride = value
		case "config":
			f.config = value
		case "kubeconfig":
			f.kubeconfig = value
		case "bootstrap-kubeconfig":
			f.bootstrapKubeconfig = value
		case "cert-dir":
			f.certDir = value
		case "node-labels":
			for _, kv := range splitList(value) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return f, fmt.Errorf("kubelet: invalid --node-labels entry %q", kv)
				}
				f.nodeLabels[k] = v
			}
		case "register-with-taints":
			for _, spec := range splitList(value) {
				t, err := parseTaint(spec)
				if err != nil {
					return f, fmt.Errorf("kubelet: --register-with-taints: %w", err)
				}
				f.taints = append(f.taints, t)
			}
		}
	}
	return f, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseTaint reads key[=value]:Effect.
func parseTaint(spec string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(spec, ":")
	key, value, _ := strings.Cut(kv, "=")
	t := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		ok = false
	}
	if !ok || key == "" {
		return t, fmt.Errorf("invalid taint %q (want key[=value]:NoSchedule|PreferNoSchedule|NoExecute)", spec)
	}
	return t, nil
}

// mergeTaints adds the taints of b that a lacks (same key and effect).
func mergeTaints(a, b []corev1.Taint) []corev1.Taint {
	out := append([]corev1.Taint(nil), a...)
	for _, t := range b {
		found := false
		for _, have := range out {
			found = found || (have.Key == t.Key && have.Effect == t.Effect)
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}
