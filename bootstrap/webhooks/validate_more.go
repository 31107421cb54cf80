package webhooks

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

var sha256Hex = regexp.MustCompile(`^[A-Fa-f0-9]{64}$`)

func validateBinaries(b bootstrapv1.Binaries, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if b.Directory != "" {
		if problem := windowsPathProblem(b.Directory); problem != "" {
			errs = append(errs, field.Invalid(path.Child("directory"), b.Directory, problem))
		}
	}
	downloads := map[string]*bootstrapv1.Download{"kubelet": b.Kubelet, "kubeadm": b.Kubeadm, "containerd": b.Containerd}
	if b.Source == bootstrapv1.BinariesDownload {
		for _, name := range []string{"kubelet", "kubeadm"} {
			if downloads[name] == nil {
				errs = append(errs, field.Required(path.Child(name), "source Download needs a URL and sha256 for "+name))
			}
		}
	} else {
		for _, name := range []string{"kubelet", "kubeadm", "containerd"} {
			if downloads[name] != nil {
				errs = append(errs, field.Forbidden(path.Child(name), "URLs are only used with source: Download"))
			}
		}
	}
	for _, name := range []string{"kubelet", "kubeadm", "containerd"} {
		if d := downloads[name]; d != nil {
			errs = append(errs, validateURL(d.URL, path.Child(name, "url"))...)
			if !sha256Hex.MatchString(d.SHA256) {
				errs = append(errs, field.Invalid(path.Child(name, "sha256"), d.SHA256, "must be the file's SHA-256: 64 hex digits"))
			}
		}
	}
	return errs
}

// validateURL accepts http(s) URLs with a host and no credentials.
func validateURL(raw string, path *field.Path) field.ErrorList {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(path, raw, "not a URL: "+err.Error())}
	case u.Scheme != "http" && u.Scheme != "https":
		return field.ErrorList{field.Invalid(path, raw, "must be an http or https URL")}
	case u.Host == "":
		return field.ErrorList{field.Invalid(path, raw, "must name a host")}
	case u.User != nil:
		return field.ErrorList{field.Invalid(path, u.Redacted(), "must not carry credentials; they would be readable in the bootstrap data")}
	}
	return nil
}

func validateProxy(p bootstrapv1.Proxy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.HTTPProxy != "" {
		errs = append(errs, validateURL(p.HTTPProxy, path.Child("httpProxy"))...)
	}
	if p.HTTPSProxy != "" {
		errs = append(errs, validateURL(p.HTTPSProxy, path.Child("httpsProxy"))...)
	}
	for i, h := range p.NoProxy {
		if h == "" || strings.ContainsAny(h, ", \t\r\n") {
			errs = append(errs, field.Invalid(path.Child("noProxy").Index(i), h, "one host, domain or CIDR per entry, without commas or spaces"))
		}
	}
	return errs
}

var (
	sshKeyTypes     = []string{"ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-nistp256 ", "ecdsa-sha2-nistp384 ", "ecdsa-sha2-nistp521 ", "sk-ssh-ed25519@openssh.com ", "sk-ecdsa-sha2-nistp256@openssh.com "}
	builtinAccounts = map[string]bool{"guest": true, "defaultaccount": true, "wdagutilityaccount": true, "system": true}
)

func validateUsers(users []bootstrapv1.User, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := make([]string, 0, len(users))
	for i, u := range users {
		names = append(names, u.Name)
		if builtinAccounts[strings.ToLower(u.Name)] {
			errs = append(errs, field.Forbidden(path.Index(i).Child("name"), u.Name+" is a built-in Windows account"))
		}
		for j, k := range u.SSHAuthorizedKeys {
			if strings.ContainsAny(k, "\r\n") || !hasAnyPrefix(strings.TrimSpace(k), sshKeyTypes) {
				errs = append(errs, field.Invalid(path.Index(i).Child("sshAuthorizedKeys").Index(j), truncate(k),
					"must be one public key line: <type> <base64> [comment], type one of ssh-ed25519, ssh-rsa, ecdsa-sha2-*, sk-*"))
			}
		}
	}
	return append(errs, duplicatesAt(names, strings.ToLower, path, "name")...)
}

func validateFiles(files []bootstrapv1.File, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := make([]string, 0, len(files))
	for i, f := range files {
		p := path.Index(i)
		paths = append(paths, f.Path)
		if problem := windowsPathProblem(f.Path); problem != "" {
			errs = append(errs, field.Invalid(p.Child("path"), f.Path, problem))
		}
		switch {
		case (f.Content == nil) == (f.ContentFrom == nil):
			errs = append(errs, field.Invalid(p, f.Path, "set exactly one of content and contentFrom"))
		case f.Content != nil:
			if problem := encodingProblem(*f.Content, f.Encoding); problem != "" {
				errs = append(errs, field.Invalid(p.Child("content"), "<content>", problem))
			}
		default:
			s := f.ContentFrom.Secret
			for _, msg := range validation.IsDNS1123Subdomain(s.Name) {
				errs = append(errs, field.Invalid(p.Child("contentFrom", "secret", "name"), s.Name, msg))
			}
			for _, msg := range validation.IsConfigMapKey(s.Key) {
				errs = append(errs, field.Invalid(p.Child("contentFrom", "secret", "key"), s.Key, msg))
			}
		}
	}
	return append(errs, duplicatesAt(paths, pathKey, path, "path")...)
}

// encodingProblem checks inline content against its declared encoding.
func encodingProblem(content string, enc bootstrapv1.Encoding) string {
	data := []byte(content)
	if enc == bootstrapv1.EncodingBase64 || enc == bootstrapv1.EncodingGzipBase64 {
		decoded, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(content), ""))
		if err != nil {
			return "encoding says base64 but the content is not valid base64: " + err.Error()
		}
		data = decoded
	}
	if enc == bootstrapv1.EncodingGzip || enc == bootstrapv1.EncodingGzipBase64 {
		if _, err := gzip.NewReader(bytes.NewReader(data)); err != nil {
			return "encoding says gzip but the content is not gzip data"
		}
	}
	return ""
}

// duplicatesAt reports values that are equal after normalize, at path[i].child (or path[i]).
func duplicatesAt(values []string, normalize func(string) string, path *field.Path, child string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, v := range values {
		key := normalize(v)
		if j, ok := seen[key]; ok {
			p := path.Index(i)
			if child != "" {
				p = p.Child(child)
			}
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("%s (same as index %d)", v, j)))
			continue
		}
		seen[key] = i
	}
	return errs
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
