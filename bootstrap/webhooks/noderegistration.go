package webhooks

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/kubeletflags"
)

func validateNodeRegistration(nr *bootstrapv1.NodeRegistration, path *field.Path) field.ErrorList {
	errs := validateLabels(nr.Labels, path.Child("labels"))
	if nr.Taints != nil {
		errs = append(errs, validateTaints(*nr.Taints, path.Child("taints"))...)
	}
	return append(errs, validateKubeletArgs(nr.KubeletExtraArgs, path)...)
}

// kubeletAllowedLabels are the kubernetes.io/k8s.io labels the NodeRestriction admission plugin
// lets a kubelet set on its own Node, besides the node.kubernetes.io and kubelet.kubernetes.io
// namespaces.
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
			errs = append(errs, field.Forbidden(p, "the kubelet cannot set node-role.kubernetes.io labels on its Node (NodeRestriction); label the Node from a controller, or use your own prefix"))
		case key == "kubernetes.io/os" && value != "windows":
			errs = append(errs, field.Invalid(p, value, "a Windows node's kubernetes.io/os label is windows"))
		case inNamespace(prefix, "kubernetes.io") || inNamespace(prefix, "k8s.io"):
			if !kubeletAllowedLabels.Has(key) && !inNamespace(prefix, "kubelet.kubernetes.io") && !inNamespace(prefix, "node.kubernetes.io") {
				errs = append(errs, field.Forbidden(p, "the kubelet may not set this kubernetes.io/k8s.io label on its Node (NodeRestriction); use node.kubernetes.io/*, kubelet.kubernetes.io/* or your own prefix"))
			}
		}
	}
	return errs
}

// inNamespace reports whether a label prefix is domain or one of its subdomains.
func inNamespace(prefix, domain string) bool {
	return prefix == domain || strings.HasSuffix(prefix, "."+domain)
}

var taintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

func validateTaints(taints []bootstrapv1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, t := range taints {
		p := path.Index(i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
		if !slices.Contains(taintEffects, t.Effect) {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, taintEffects))
		}
		id := t.Key + ":" + t.Effect
		if j, ok := seen[id]; ok {
			errs = append(errs, duplicate(p, id, fmt.Sprintf("%s has the same key and effect", path.Index(j))))
			continue
		}
		seen[id] = i
	}
	return errs
}

// ownedKubeletFlag is a kubelet flag capwin sets itself: either from a field of
// nodeRegistration or for a reason the operator cannot change.
type ownedKubeletFlag struct{ field, reason string }

var ownedKubeletFlags = map[string]ownedKubeletFlag{
	"windows-service":            {reason: "capwin runs the kubelet as a Windows service"},
	"bootstrap-kubeconfig":       {reason: "kubeadm join writes it"},
	"kubeconfig":                 {reason: "kubeadm join writes it"},
	"config":                     {reason: "kubeadm join writes the kubelet configuration"},
	"node-labels":                {field: "labels"},
	"register-with-taints":       {field: "taints"},
	"container-runtime-endpoint": {field: "criSocket"},
	"hostname-override":          {field: "name"},
}

var kubeletFlagName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// validateKubeletArgs checks nodeRegistration.kubeletExtraArgs; nr is the nodeRegistration path,
// so a message can point at the field that replaces an owned flag.
func validateKubeletArgs(args []bootstrapv1.Arg, nr *field.Path) field.ErrorList {
	var errs field.ErrorList
	path := nr.Child("kubeletExtraArgs")
	names := make([]string, 0, len(args))
	for i, a := range args {
		p := path.Index(i)
		names = append(names, a.Name)
		if owned, ok := ownedKubeletFlags[a.Name]; ok {
			msg := fmt.Sprintf("--%s is set by capwin: %s", a.Name, owned.reason)
			if owned.field != "" {
				msg = fmt.Sprintf("--%s is set by capwin from %s; set that field instead", a.Name, nr.Child(owned.field))
			}
			errs = append(errs, field.Forbidden(p.Child("name"), msg))
		}
		switch {
		case !kubeletFlagName.MatchString(a.Name):
			errs = append(errs, field.Invalid(p.Child("name"), a.Name, "a kubelet flag name without leading dashes: lower-case letters, digits and '-', e.g. max-pods"))
		case !kubeletflags.Known(a.Name):
			errs = append(errs, field.Invalid(p.Child("name"), a.Name, fmt.Sprintf(
				"no Windows kubelet %s has a flag --%s: it would not start (unknown flag)", kubeletflags.Range(), a.Name)))
		}
		if strings.ContainsAny(a.Value, "\"\r\n\x00") {
			errs = append(errs, field.Invalid(p.Child("value"), a.Value, "must not contain double quotes, line breaks or NUL (it goes on the kubelet service's command line)"))
		}
	}
	return append(errs, duplicates(names, func(s string) string { return s }, path, "name", "")...)
}

// kubeletArgWarnings pass on what kubeletflags knows of each flag: the supported kubelets that
// lack it (their Machines get no bootstrap data) and the kubelet's deprecation message.
func kubeletArgWarnings(args []bootstrapv1.Arg, path *field.Path) []string {
	var out []string
	for i, a := range args {
		for _, w := range kubeletflags.Warnings(a.Name) {
			out = append(out, fmt.Sprintf("%s: %s", path.Index(i).Child("name"), w))
		}
	}
	return out
}
