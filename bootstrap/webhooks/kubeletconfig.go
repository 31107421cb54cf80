package webhooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	sigsjson "sigs.k8s.io/json"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// validateKubeletConfiguration checks spec.kubeletConfiguration field by field against the
// kubelet's own KubeletConfiguration type (case-sensitive, unknown fields refused by name), then
// refuses what capwin owns or Windows lacks, checks the values the kubelet would refuse at start,
// and refuses a field that a flag in nodeRegistration.kubeletExtraArgs sets too.
func validateKubeletConfiguration(spec *bootstrapv1.WindowsConfigSpec, path *field.Path) field.ErrorList {
	raw := spec.KubeletConfiguration
	if raw == nil || len(raw.Raw) == 0 {
		return nil
	}
	p := path.Child("kubeletConfiguration")
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw.Raw, &fields); err != nil || fields == nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, "must be an object of KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields")}
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs field.ErrorList
	for _, name := range names {
		if reason, ok := refusedKubeletFields[name]; ok {
			errs = append(errs, field.Forbidden(p.Child(name), reason))
			continue
		}
		errs = append(errs, decodeKubeletField(name, fields[name], p)...)
	}
	if len(errs) > 0 {
		return errs
	}
	errs = append(errs, checkKubeletValues(fields, p)...)
	return append(errs, kubeletFlagConflicts(fields, spec.NodeRegistration.KubeletExtraArgs, p, path.Child("nodeRegistration", "kubeletExtraArgs"))...)
}

// decodeKubeletField decodes one field into the kubelet's type; errors name the field (and the
// nested field a strict decoding error names).
func decodeKubeletField(name string, value json.RawMessage, p *field.Path) field.ErrorList {
	one, err := json.Marshal(map[string]json.RawMessage{name: value})
	if err != nil {
		return field.ErrorList{field.Invalid(p.Child(name), field.OmitValueType{}, err.Error())}
	}
	strict, err := sigsjson.UnmarshalStrict(one, &kubeletv1beta1.KubeletConfiguration{})
	if err != nil {
		return field.ErrorList{field.Invalid(p.Child(name), field.OmitValueType{}, decodeProblem(one, err))}
	}
	var errs field.ErrorList
	for _, e := range strict {
		var fe sigsjson.FieldError
		if !errors.As(e, &fe) {
			errs = append(errs, field.Invalid(p.Child(name), field.OmitValueType{}, e.Error()))
			continue
		}
		if strings.HasPrefix(fe.Error(), "duplicate field") {
			errs = append(errs, duplicate(jsonPath(p, fe.FieldPath()), field.OmitValueType{}, "set twice"))
			continue
		}
		errs = append(errs, field.Forbidden(jsonPath(p, fe.FieldPath()),
			"unknown field: not in the kubelet's KubeletConfiguration (kubelet.config.k8s.io/v1beta1); names are case-sensitive"))
	}
	return errs
}

// decodeProblem says why the kubelet cannot read a value: encoding/json's type error is the
// clearest (the sigs.k8s.io/json decoder does not export its own).
func decodeProblem(one []byte, err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(json.Unmarshal(one, &kubeletv1beta1.KubeletConfiguration{}), &typeErr) {
		return fmt.Sprintf("the kubelet reads it as %s, not as a JSON %s", typeErr.Type, typeErr.Value)
	}
	return "the kubelet cannot read it: " + err.Error()
}

var jsonPathSegment = regexp.MustCompile(`[^.\[\]]+|\[\d+\]`)

// jsonPath turns a decoder's path ("logging.options.json", "list[2].name") into a field path.
func jsonPath(p *field.Path, s string) *field.Path {
	for _, seg := range jsonPathSegment.FindAllString(s, -1) {
		if seg[0] == '[' {
			i, _ := strconv.Atoi(seg[1 : len(seg)-1])
			p = p.Index(i)
			continue
		}
		p = p.Child(seg)
	}
	return p
}
