// Package webhooks holds the admission webhooks of the windows bootstrap provider. The rules are
// pure functions (ValidateSpec, DefaultSpec), shared with the offline render command.
package webhooks

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// ValidateSpec returns every problem of a WindowsConfigSpec, each with its field path below path
// (spec for a WindowsConfig, spec.template.spec for a template). It checks what the CRD schema
// cannot express and repeats the schema's CEL rules, so the render command catches them too.
func ValidateSpec(spec *bootstrapv1.WindowsConfigSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch spec.Format {
	case "", bootstrapv1.FormatCloudConfig, bootstrapv1.FormatPowerShell:
	default:
		errs = append(errs, field.NotSupported(path.Child("format"), spec.Format,
			[]string{string(bootstrapv1.FormatCloudConfig), string(bootstrapv1.FormatPowerShell)}))
	}
	errs = append(errs, validateNodeRegistration(&spec.NodeRegistration, path.Child("nodeRegistration"))...)
	errs = append(errs, validateKubeletConfiguration(spec, path)...)
	errs = append(errs, validateCNI(spec.CNI, path.Child("cni"))...)
	errs = append(errs, validateBinaries(spec.Binaries, path.Child("binaries"))...)
	errs = append(errs, validateProxy(spec.Proxy, path.Child("proxy"))...)
	errs = append(errs, validateActiveDirectory(spec.ActiveDirectory, path.Child("activeDirectory"))...)
	errs = append(errs, validateRegistries(spec.Containerd.Registries, path.Child("containerd", "registries"))...)
	errs = append(errs, validateDisks(spec, path)...)
	errs = append(errs, validatePrePull(spec.PrePull, path.Child("prePull"))...)
	errs = append(errs, validateUsers(spec.Users, path.Child("users"))...)
	errs = append(errs, validateFiles(spec.Files, path.Child("files"))...)
	errs = append(errs, validateCommands(spec.PreJoinCommands, path.Child("preJoinCommands"))...)
	errs = append(errs, validateCommands(spec.PostJoinCommands, path.Child("postJoinCommands"))...)
	if spec.Timezone != "" && strings.TrimSpace(spec.Timezone) == "" {
		errs = append(errs, field.Invalid(path.Child("timezone"), spec.Timezone, "must name a Windows time zone, e.g. UTC"))
	}
	errs = append(errs, duplicates(spec.NTP.Servers, strings.ToLower, path.Child("ntp", "servers"), "", "")...)
	return errs
}

func validateCNI(c bootstrapv1.CNI, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case c.Plugin == bootstrapv1.CNIFlannel && c.VXLANVNI != 0 && c.VXLANVNI != DefaultVXLANVNI:
		errs = append(errs, field.Invalid(path.Child("vxlanVNI"), c.VXLANVNI, "flannel on Windows requires vxlanVNI 4096"))
	case c.VXLANVNI != 0 && c.VXLANVNI < DefaultVXLANVNI:
		errs = append(errs, field.Invalid(path.Child("vxlanVNI"), c.VXLANVNI, "Windows overlays need a vxlanVNI of at least 4096"))
	}
	if c.Plugin == bootstrapv1.CNIFlannel && c.VXLANPort != 0 && c.VXLANPort != DefaultVXLANPort {
		errs = append(errs, field.Invalid(path.Child("vxlanPort"), c.VXLANPort, "flannel on Windows requires vxlanPort 4789"))
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
			errs = append(errs, field.Invalid(path.Index(i), field.OmitValueType{}, "must not contain a NUL character"))
		}
	}
	return errs
}

// sshKeyTypes are the public key types Windows OpenSSH accepts, each followed by its separator.
var sshKeyTypes = []string{
	"ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-nistp256 ", "ecdsa-sha2-nistp384 ", "ecdsa-sha2-nistp521 ",
	"sk-ssh-ed25519@openssh.com ", "sk-ecdsa-sha2-nistp256@openssh.com ",
}

// builtinAccounts are Windows accounts that must not be created or changed (lower-case).
var builtinAccounts = map[string]bool{"guest": true, "defaultaccount": true, "wdagutilityaccount": true, "system": true}

func validateUsers(users []bootstrapv1.User, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := make([]string, 0, len(users))
	for i, u := range users {
		names = append(names, u.Name)
		if builtinAccounts[strings.ToLower(u.Name)] {
			errs = append(errs, field.Forbidden(path.Index(i).Child("name"), u.Name+" is a built-in Windows account; choose another user name"))
		}
		for j, k := range u.SSHAuthorizedKeys {
			if strings.ContainsAny(k, "\r\n") || !hasAnyPrefix(strings.TrimSpace(k), sshKeyTypes) {
				errs = append(errs, field.Invalid(path.Index(i).Child("sshAuthorizedKeys").Index(j), truncate(k),
					"must be one public key line: <type> <base64> [comment], type one of ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp*, sk-*@openssh.com"))
			}
		}
	}
	return append(errs, duplicates(names, strings.ToLower, path, "name", "user names compare case-insensitively on Windows")...)
}

// duplicates reports each value equal, after normalize, to an earlier one. The error is at
// path[i].child (path[i] when child is ""), and names the earlier element; why, if given, says
// how values compare.
func duplicates(values []string, normalize func(string) string, path *field.Path, child, why string) field.ErrorList {
	at := func(i int) *field.Path {
		if child == "" {
			return path.Index(i)
		}
		return path.Index(i).Child(child)
	}
	var errs field.ErrorList
	seen := map[string]int{}
	for i, v := range values {
		key := normalize(v)
		if j, ok := seen[key]; ok {
			detail := fmt.Sprintf("same as %s", at(j))
			if why != "" {
				detail += " (" + why + ")"
			}
			errs = append(errs, duplicate(at(i), v, detail))
			continue
		}
		seen[key] = i
	}
	return errs
}

// duplicate is a Duplicate error with an explanation.
func duplicate(path *field.Path, value any, detail string) *field.Error {
	err := field.Duplicate(path, value)
	err.Detail = detail
	return err
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// truncate shortens a long value quoted in an error message.
func truncate(s string) string {
	const limit = 40
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + "..."
}
