package main

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// typeOf names a field's type as a reader of YAML sees it: string, integer, boolean, object,
// []string, map[string]string, int or string.
func typeOf(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int or string"
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		return "[]" + typeOf(s.Items.Schema)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map[string]" + typeOf(s.AdditionalProperties.Schema)
	case s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
		return "object (any fields)"
	case s.Format != "" && s.Type == "string":
		return "string (" + s.Format + ")"
	case s.Type == "":
		return "any"
	}
	return s.Type
}

// limits says what the API server checks of a field besides its type: default, allowed values,
// sizes, pattern and CEL rules (by their messages).
func limits(s *apiextensionsv1.JSONSchemaProps) string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if s.Default != nil {
		add("Default: `%s`.", s.Default.Raw)
	}
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			vals = append(vals, "`"+strings.Trim(string(e.Raw), `"`)+"`")
		}
		add("One of %s.", strings.Join(vals, ", "))
	}
	if r := between(s.MinLength, s.MaxLength); r != "" {
		add("Length %s.", r)
	}
	if r := between(s.MinItems, s.MaxItems); r != "" {
		add("Items %s.", r)
	}
	if r := between(s.MinProperties, s.MaxProperties); r != "" {
		add("Entries %s.", r)
	}
	if s.Minimum != nil || s.Maximum != nil {
		add("Value %s.", between(floatPtr(s.Minimum), floatPtr(s.Maximum)))
	}
	if s.Pattern != "" {
		add("Pattern `%s`.", s.Pattern)
	}
	for _, r := range s.XValidations {
		msg := r.Message
		if msg == "" {
			msg = "`" + r.Rule + "`"
		}
		add("Rule: %s.", strings.TrimSuffix(text(msg), "."))
	}
	return strings.Join(out, " ")
}

// between is "1 to 253", "at least 1" or "at most 253" (empty when neither is set).
func between(lo, hi *int64) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%d to %d", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf("at least %d", *lo)
	case hi != nil:
		return fmt.Sprintf("at most %d", *hi)
	}
	return ""
}

func floatPtr(f *float64) *int64 {
	if f == nil {
		return nil
	}
	i := int64(*f)
	return &i
}

// text is a description as one line of a Markdown table cell: whitespace collapsed, pipes
// escaped, and angle brackets outside code spans written as entities so "<name>" stays text,
// not an HTML tag (inside a code span an entity would show as written).
func text(s string) string {
	s = strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
	parts := strings.Split(s, "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(parts[i])
	}
	return strings.Join(parts, "`")
}
