package userdata

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"unicode"
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

// checkPrintable rejects control and other non-printable characters in the values that end up in
// the YAML documents (cloud-config, JoinConfiguration), in Windows names and on the kubelet's
// service command line.
func checkPrintable(in *Input) error {
	values := map[string]string{"timezone": in.Timezone, "nodeName": in.NodeName, "pauseImage": in.PauseImage}
	for i, t := range in.Taints {
		values[fmt.Sprintf("taints[%d]", i)] = t.Key + t.Value + t.Effect
	}
	for i, s := range in.Join.IgnorePreflightErrors {
		values[fmt.Sprintf("ignorePreflightErrors[%d]", i)] = s
	}
	for k, v := range in.Labels {
		values[fmt.Sprintf("labels[%s]", k)] = k + v
	}
	for i, a := range in.KubeletExtraArgs {
		values[fmt.Sprintf("kubeletExtraArgs[%d]", i)] = a.Name + a.Value
	}
	for i, s := range in.NTPServers {
		values[fmt.Sprintf("ntpServers[%d]", i)] = s
	}
	for i, f := range in.Files {
		values[fmt.Sprintf("files[%d].path", i)] = f.Path
	}
	for i, u := range in.Users {
		values[fmt.Sprintf("users[%d].name", i)] = u.Name
		for j, g := range u.Groups {
			values[fmt.Sprintf("users[%d].groups[%d]", i, j)] = g
		}
		for j, k := range u.SSHAuthorizedKeys {
			values[fmt.Sprintf("users[%d].sshAuthorizedKeys[%d]", i, j)] = k
		}
	}
	for _, name := range sorted(slices.Collect(maps.Keys(values))) {
		for _, r := range values[name] {
			if !unicode.IsPrint(r) {
				return fmt.Errorf("%s contains the non-printable character %U", name, r)
			}
		}
	}
	return nil
}
