package userdata

import (
	"fmt"
	"reflect"
	"unicode/utf8"
)

// checkUTF8 rejects strings that are not valid UTF-8: JSON and YAML would silently replace the
// bad bytes, and a node must never get a value other than the one in the spec. File contents are
// bytes and travel base64-encoded, so they are exempt.
func checkUTF8(in *Input) error {
	return walkStrings(reflect.ValueOf(*in), "input")
}

func walkStrings(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return fmt.Errorf("%s is not valid UTF-8", path)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return walkStrings(v.Elem(), path)
		}
	case reflect.Slice:
		for i := range v.Len() {
			if err := walkStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			p := fmt.Sprintf("%s[%q]", path, iter.Key().String())
			if err := walkStrings(iter.Key(), p); err != nil {
				return err
			}
			if err := walkStrings(iter.Value(), p); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			field := v.Type().Field(i)
			if v.Type() == reflect.TypeFor[File]() && field.Name == "Content" {
				continue
			}
			if err := walkStrings(v.Field(i), path+"."+field.Name); err != nil {
				return err
			}
		}
	}
	return nil
}
