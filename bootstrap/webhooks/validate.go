// Package webhooks holds the admission webhooks of the windows bootstrap provider. The rules are
// pure functions (ValidateSpec, DefaultSpec), shared with the offline render command.
package webhooks

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// ValidateSpec returns every problem of a WindowsConfigSpec, each with its field path.
func ValidateSpec(spec *bootstrapv1.WindowsConfigSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch spec.Format {
	case "", bootstrapv1.FormatCloudConfig, bootstrapv1.FormatPowerShell:
	default:
		errs = append(errs, field.NotSupported(path.Child("format"), spec.Format,
			[]string{string(bootstrapv1.FormatCloudConfig), string(bootstrapv1.FormatPowerShell)}))
	}
	nr := path.Child("nodeRegistration")
	errs = append(errs, validateLabels(spec.NodeRegistration.Labels, nr.Child("labels"))...)
	if spec.NodeRegistration.Taints != nil {
		errs = append(errs, validateTaints(*spec.NodeRegistration.Taints, nr.Child("taints"))...)
	}
	errs = append(errs, validateKubeletArgs(spec.NodeRegistration.KubeletExtraArgs, nr.Child("kubeletExtraArgs"))...)
	errs = append(errs, validateCNI(spec.CNI, path.Child("cni"))...)
	errs = append(errs, validateBinaries(spec.Binaries, path.Child("binaries"))...)
	errs = append(errs, validateProxy(spec.Proxy, path.Child("proxy"))...)
	errs = append(errs, validateUsers(spec.Users, path.Child("users"))...)
	errs = append(errs, validateFiles(spec.Files, path.Child("files"))...)
	errs = append(errs, validateCommands(spec.PreJoinCommands, path.Child("preJoinCommands"))...)
	errs = append(errs, validateCommands(spec.PostJoinCommands, path.Child("postJoinCommands"))...)
	if spec.Timezone != "" && strings.TrimSpace(spec.Timezone) == "" {
		errs = append(errs, field.Invalid(path.Child("timezone"), spec.Timezone, "must name a Windows time zone, e.g. UTC"))
	}
	errs = append(errs, duplicatesAt(spec.NTP.Servers, strings.ToLower, path.Child("ntp", "servers"), "")...)
	return errs
}

// kubeletAllowedLabels are the kubernetes.io/k8s.io labels the NodeRestriction admission plugin
// lets a kubelet set on its own Node.
var kubeletAllowedLabels = sets.New(
	"kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os",
	"beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
	"failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
	"topology.kubernetes.io/region", "topology.kubernetes.io/zone",
)

func validateLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, key := range sets.List(sets.KeySet(labels)) {
		value := labels[key]
		p := path.Key(key)
		for _, msg := range validation.IsQualifiedName(key) {
			errs = append(errs, field.Invalid(p, key, "label key: "+msg))
		}
		for _, msg := range validation.IsValidLabelValue(value) {
			errs = append(errs, field.Invalid(p, value, "label value: "+msg))
		}
		prefix, _, hasPrefix := strings.Cut(key, "/")
		if !hasPrefix {
			continue
		}
		switch {
		case prefix == "node-role.kubernetes.io":
			errs = append(errs, field.Forbidden(p, "the kubelet cannot set node-role.kubernetes.io labels (NodeRestriction); label the Node from a controller or use your own prefix"))
		case key == "kubernetes.io/os" && value != "windows":
			errs = append(errs, field.Invalid(p, value, "a Windows node's kubernetes.io/os is windows"))
		case inNamespace(prefix, "kubernetes.io") || inNamespace(prefix, "k8s.io"):
			if !kubeletAllowedLabels.Has(key) && !inNamespace(prefix, "kubelet.kubernetes.io") && !inNamespace(prefix, "node.kubernetes.io") {
				errs = append(errs, field.Forbidden(p, "the kubelet may not set this kubernetes.io/k8s.io label (NodeRestriction); use node.kubernetes.io/*, kubelet.kubernetes.io/* or your own prefix"))
			}
		}
	}
	return errs
}

func inNamespace(prefix, domain string) bool {
	return prefix == domain || strings.HasSuffix(prefix, "."+domain)
}

func validateTaints(taints []bootstrapv1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, t := range taints {
		p := path.Index(i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
		if t.Value != "" {
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
			}
		}
		switch t.Effect {
		case "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
		id := t.Key + ":" + t.Effect
		if j, ok := seen[id]; ok {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("taint %s already set at index %d", id, j)))
		}
		seen[id] = i
	}
	return errs
}

// ownedKubeletFlags are set by capwin; each maps to the field that controls it.
var ownedKubeletFlags = map[string]string{
	"windows-service":            "capwin runs the kubelet as a Windows service",
	"bootstrap-kubeconfig":       "kubeadm join writes it",
	"kubeconfig":                 "kubeadm join writes it",
	"config":                     "kubeadm join writes the kubelet configuration",
	"node-labels":                "use spec.nodeRegistration.labels",
	"register-with-taints":       "use spec.nodeRegistration.taints",
	"container-runtime-endpoint": "use spec.nodeRegistration.criSocket",
	"hostname-override":          "use spec.nodeRegistration.name",
}

func validateKubeletArgs(args []bootstrapv1.Arg, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, a := range args {
		p := path.Index(i)
		name := a.Name
		if why, owned := ownedKubeletFlags[name]; owned {
			errs = append(errs, field.Forbidden(p.Child("name"), fmt.Sprintf("--%s is set by capwin: %s", name, why)))
		}
		if name == "" || strings.HasPrefix(name, "-") || strings.ToLower(name) != name || strings.ContainsAny(name, "= \t") {
			errs = append(errs, field.Invalid(p.Child("name"), name, "flag name without leading dashes, lowercase, e.g. max-pods"))
		}
		if strings.ContainsAny(a.Value, "\"\r\n\x00") {
			errs = append(errs, field.Invalid(p.Child("value"), a.Value, "must not contain quotes, line breaks or NUL (it goes on the kubelet service's command line)"))
		}
		if j, ok := seen[name]; ok {
			errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s already set at index %d", name, j)))
		}
		seen[name] = i
	}
	return errs
}

func validateCNI(c bootstrapv1.CNI, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Plugin == bootstrapv1.CNIFlannel {
		if c.VXLANVNI != 0 && c.VXLANVNI != DefaultVXLANVNI {
			errs = append(errs, field.Invalid(path.Child("vxlanVNI"), c.VXLANVNI, "flannel on Windows requires VNI 4096"))
		}
		if c.VXLANPort != 0 && c.VXLANPort != DefaultVXLANPort {
			errs = append(errs, field.Invalid(path.Child("vxlanPort"), c.VXLANPort, "flannel on Windows requires port 4789"))
		}
	}
	if c.VXLANVNI != 0 && c.VXLANVNI < DefaultVXLANVNI {
		errs = append(errs, field.Invalid(path.Child("vxlanVNI"), c.VXLANVNI, "Windows overlays need a VNI of at least 4096"))
	}
	return errs
}

func validateCommands(commands []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range commands {
		if strings.TrimSpace(c) == "" {
			errs = append(errs, field.Required(path.Index(i), "a command must not be empty"))
		}
		if strings.ContainsRune(c, 0) {
			errs = append(errs, field.Invalid(path.Index(i), "<command>", "must not contain NUL"))
		}
	}
	return errs
}
