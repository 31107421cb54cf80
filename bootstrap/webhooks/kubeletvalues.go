package webhooks

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// checkKubeletValues repeats the kubelet's start-up checks of the fields operators set most, so a
// bad value is refused here and not by a kubelet that never starts. fields decode (checked
// before); a null value removes the cluster's setting and is not checked.
func checkKubeletValues(fields map[string]json.RawMessage, p *field.Path) field.ErrorList {
	kc := &kubeletv1beta1.KubeletConfiguration{}
	all, _ := json.Marshal(fields)
	_ = json.Unmarshal(all, kc)
	var errs field.ErrorList
	if v, ok := fields["apiVersion"]; ok && kc.APIVersion != kubeletv1beta1.SchemeGroupVersion.String() {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), string(v), "leave it out, or set "+kubeletv1beta1.SchemeGroupVersion.String()))
	}
	if v, ok := fields["kind"]; ok && kc.Kind != "KubeletConfiguration" {
		errs = append(errs, field.Invalid(p.Child("kind"), string(v), "leave it out, or set KubeletConfiguration"))
	}
	if isSet(fields, "maxPods") && kc.MaxPods < 1 {
		errs = append(errs, field.Invalid(p.Child("maxPods"), kc.MaxPods, "must be at least 1 (leave it out for the cluster's value)"))
	}
	errs = append(errs, checkImageGC(kc, p)...)
	for _, name := range []string{"systemReserved", "kubeReserved"} {
		m := stringMap(fields[name])
		for _, key := range slices.Sorted(maps.Keys(m)) {
			errs = append(errs, checkReserved(p.Child(name).Key(key), key, m[key])...)
		}
	}
	for _, name := range []string{"evictionHard", "evictionSoft", "evictionMinimumReclaim", "evictionSoftGracePeriod"} {
		m := stringMap(fields[name])
		for _, signal := range slices.Sorted(maps.Keys(m)) {
			errs = append(errs, checkEviction(p.Child(name).Key(signal), name, signal, m[signal])...)
		}
	}
	grace, soft := stringMap(fields["evictionSoftGracePeriod"]), stringMap(fields["evictionSoft"])
	for _, signal := range slices.Sorted(maps.Keys(soft)) {
		if soft[signal] != nil && grace[signal] == nil {
			errs = append(errs, field.Required(p.Child("evictionSoftGracePeriod").Key(signal), "the kubelet needs a grace period for each evictionSoft signal"))
		}
	}
	return errs
}

func isSet(fields map[string]json.RawMessage, name string) bool {
	v, ok := fields[name]
	return ok && string(v) != "null"
}

// stringMap decodes a map[string]string field keeping null values (a merge patch removes them).
func stringMap(raw json.RawMessage) map[string]*string {
	var m map[string]*string
	_ = json.Unmarshal(raw, &m)
	return m
}

func checkImageGC(kc *kubeletv1beta1.KubeletConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	high, low := kc.ImageGCHighThresholdPercent, kc.ImageGCLowThresholdPercent
	for _, v := range []struct {
		name  string
		value *int32
	}{{"imageGCHighThresholdPercent", high}, {"imageGCLowThresholdPercent", low}} {
		if v.value != nil && (*v.value < 0 || *v.value > 100) {
			errs = append(errs, field.Invalid(p.Child(v.name), *v.value, "must be between 0 and 100"))
		}
	}
	if high != nil && low != nil && *low >= *high {
		errs = append(errs, field.Invalid(p.Child("imageGCLowThresholdPercent"), *low, fmt.Sprintf("must be less than imageGCHighThresholdPercent (%d)", *high)))
	}
	return errs
}

func checkReserved(p *field.Path, key string, value *string) field.ErrorList {
	if !slices.Contains(reservableResources, key) {
		return field.ErrorList{field.NotSupported(p, key, reservableResources)}
	}
	if value == nil {
		return nil
	}
	if q, err := resource.ParseQuantity(*value); err != nil || q.Sign() < 0 {
		return field.ErrorList{field.Invalid(p, *value, "must be a non-negative quantity, e.g. 500m or 1Gi")}
	}
	return nil
}

// checkEviction checks one signal of evictionHard, evictionSoft, evictionMinimumReclaim (a
// quantity or a percentage) or evictionSoftGracePeriod (a duration).
func checkEviction(p *field.Path, name, signal string, value *string) field.ErrorList {
	why, known := evictionSignals[signal]
	switch {
	case !known:
		return field.ErrorList{field.NotSupported(p, signal, supportedSignals())}
	case why != "":
		return field.ErrorList{field.Forbidden(p, why)}
	case value == nil:
		return nil
	case name == "evictionSoftGracePeriod":
		if d, err := time.ParseDuration(*value); err != nil || d < 0 {
			return field.ErrorList{field.Invalid(p, *value, "must be a non-negative duration, e.g. 90s")}
		}
	case strings.HasSuffix(*value, "%"):
		if pct, err := strconv.ParseFloat(strings.TrimSuffix(*value, "%"), 32); err != nil || pct < 0 || pct > 100 {
			return field.ErrorList{field.Invalid(p, *value, "a percentage must be between 0% and 100%")}
		}
	default:
		if q, err := resource.ParseQuantity(*value); err != nil || q.Sign() < 0 {
			return field.ErrorList{field.Invalid(p, *value, "must be a non-negative quantity (e.g. 500Mi) or a percentage (e.g. 10%)")}
		}
	}
	return nil
}

func supportedSignals() []string {
	var out []string
	for s, why := range evictionSignals {
		if why == "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
