package guestjoin

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// KubeletFlags is what a simulated kubelet takes from its service command line.
type KubeletFlags struct {
	HostnameOverride    string
	NodeLabels          map[string]string
	Taints              []corev1.Taint
	Config              string // KubeletConfiguration written by kubeadm join
	Kubeconfig          string // written by the kubelet after its TLS bootstrap
	BootstrapKubeconfig string // written by kubeadm join, removed after the TLS bootstrap
	CertDir             string
}

// ParseKubeletFlags reads "--name=value" flags; the defaults are the kubelet's on Windows.
func ParseKubeletFlags(args []string) (KubeletFlags, error) {
	f := KubeletFlags{
		Config:              `C:\var\lib\kubelet\config.yaml`,
		Kubeconfig:          `C:\etc\kubernetes\kubelet.conf`,
		BootstrapKubeconfig: `C:\etc\kubernetes\bootstrap-kubelet.conf`,
		CertDir:             `C:\var\lib\kubelet\pki`,
		NodeLabels:          map[string]string{},
	}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch name {
		case "hostname-override":
			f.HostnameOverride = value
		case "config":
			f.Config = value
		case "kubeconfig":
			f.Kubeconfig = value
		case "bootstrap-kubeconfig":
			f.BootstrapKubeconfig = value
		case "cert-dir":
			f.CertDir = value
		case "node-labels":
			for _, kv := range splitList(value) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return f, fmt.Errorf("kubelet: invalid --node-labels entry %q", kv)
				}
				f.NodeLabels[k] = v
			}
		case "register-with-taints":
			for _, spec := range splitList(value) {
				t, err := ParseTaint(spec)
				if err != nil {
					return f, fmt.Errorf("kubelet: --register-with-taints: %w", err)
				}
				f.Taints = append(f.Taints, t)
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

// ParseTaint reads key[=value]:Effect.
func ParseTaint(spec string) (corev1.Taint, error) {
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

// MergeTaints adds the taints of b that a lacks (same key and effect).
func MergeTaints(a, b []corev1.Taint) []corev1.Taint {
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
