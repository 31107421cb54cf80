package webhooks

import (
	"encoding/json"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// changedFields returns the paths below path at which before and after differ, compared in their
// JSON form so that unset and omitted-empty fields count as equal. Objects and equally long lists
// are descended into, so an error names the field that changed, not the whole spec.
func changedFields(before, after any, path *field.Path) []*field.Path {
	return diff(toJSON(before), toJSON(after), path)
}

func toJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // API types always marshal
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func diff(a, b any, path *field.Path) []*field.Path {
	switch a := a.(type) {
	case map[string]any:
		if b, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(a)+len(b))
			for k := range a {
				keys = append(keys, k)
			}
			for k := range b {
				if _, ok := a[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			var paths []*field.Path
			for _, k := range keys {
				paths = append(paths, diff(a[k], b[k], path.Child(k))...)
			}
			return paths
		}
	case []any:
		if b, ok := b.([]any); ok && len(a) == len(b) {
			var paths []*field.Path
			for i := range a {
				paths = append(paths, diff(a[i], b[i], path.Index(i))...)
			}
			return paths
		}
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []*field.Path{path}
}

// immutable returns one error per changed field, each telling how to make the change instead.
func immutable(before, after any, path *field.Path, how string) field.ErrorList {
	var errs field.ErrorList
	for _, p := range changedFields(before, after, path) {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "field is immutable: "+how))
	}
	return errs
}
