package webhooks

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

var sha256Hex = regexp.MustCompile(`^[A-Fa-f0-9]{64}$`)

// namedDownload is one of the binaries' downloads with its field name.
type namedDownload struct {
	name     string
	download *bootstrapv1.Download
}

// downloads lists kubelet, kubeadm, containerd and kube-log-runner in field order, set or not.
func downloads(b bootstrapv1.Binaries) []namedDownload {
	return []namedDownload{{"kubelet", b.Kubelet}, {"kubeadm", b.Kubeadm}, {"containerd", b.Containerd},
		{"kubeLogRunner", b.KubeLogRunner}}
}

func validateBinaries(b bootstrapv1.Binaries, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if b.Directory != "" {
		if problem := windowsPathProblem(b.Directory); problem != "" {
			errs = append(errs, field.Invalid(path.Child("directory"), b.Directory, problem))
		}
	}
	for _, d := range downloads(b) {
		p := path.Child(d.name)
		switch {
		case d.download == nil:
			if b.Source == bootstrapv1.BinariesDownload && (d.name == "kubelet" || d.name == "kubeadm") {
				errs = append(errs, field.Required(p, "source Download needs a url and sha256 for "+d.name))
			}
		case b.Source != bootstrapv1.BinariesDownload:
			errs = append(errs, field.Forbidden(p, "download URLs are only used with source: Download"))
		default:
			errs = append(errs, validateURL(d.download.URL, p.Child("url"), false)...)
			if !sha256Hex.MatchString(d.download.SHA256) {
				errs = append(errs, field.Invalid(p.Child("sha256"), d.download.SHA256, "must be the file's SHA-256: 64 hex digits"))
			}
		}
	}
	return errs
}

// validateURL accepts http(s) URLs with a host; credentials only where allowCredentials.
func validateURL(raw string, path *field.Path, allowCredentials bool) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, "not a URL: "+err.Error())}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return field.ErrorList{field.Invalid(path, u.Redacted(), "must be an http:// or https:// URL")}
	case u.Host == "":
		return field.ErrorList{field.Invalid(path, u.Redacted(), "must name a host, e.g. https://dl.example.com/file")}
	case u.User != nil && !allowCredentials:
		return field.ErrorList{field.Invalid(path, u.Redacted(),
			"must not carry credentials: they would be readable in the bootstrap data; serve the file from a location the nodes can reach without credentials (e.g. an internal mirror) instead of putting them in the URL")}
	}
	return nil
}

// validateProxy checks the proxy URLs (which may carry proxy credentials, as HTTP_PROXY does)
// and the noProxy entries.
func validateProxy(p bootstrapv1.Proxy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.HTTPProxy != "" {
		errs = append(errs, validateURL(p.HTTPProxy, path.Child("httpProxy"), true)...)
	}
	if p.HTTPSProxy != "" {
		errs = append(errs, validateURL(p.HTTPSProxy, path.Child("httpsProxy"), true)...)
	}
	for i, h := range p.NoProxy {
		if h == "" || strings.ContainsRune(h, ',') || strings.ContainsFunc(h, unicode.IsSpace) {
			errs = append(errs, field.Invalid(path.Child("noProxy").Index(i), h, "one host, domain or CIDR per entry, without commas or spaces"))
		}
	}
	return errs
}

// specWarnings are the admission warnings of a spec: settings that work but weaken the node, and
// kubelet flags that not every supported kubelet takes as they are.
func specWarnings(spec *bootstrapv1.WindowsConfigSpec, path *field.Path) []string {
	out := append(downloadWarnings(spec.Binaries, path.Child("binaries")),
		registryWarnings(spec.Containerd.Registries, path.Child("containerd", "registries"))...)
	return append(out, kubeletArgWarnings(spec.NodeRegistration.KubeletExtraArgs, path.Child("nodeRegistration", "kubeletExtraArgs"))...)
}

// downloadWarnings point out downloads over plain http.
func downloadWarnings(b bootstrapv1.Binaries, path *field.Path) []string {
	var out []string
	for _, d := range downloads(b) {
		if d.download == nil {
			continue
		}
		if u, err := url.Parse(d.download.URL); err == nil && u.Scheme == "http" {
			out = append(out, fmt.Sprintf("%s uses plain http: the sha256 is still verified, but anyone on the path can see what the node downloads", path.Child(d.name, "url")))
		}
	}
	return out
}
