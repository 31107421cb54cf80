package webhooks

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// validateRegistries checks spec.containerd.registries: hosts as image names spell them, mirror
// URLs, one CA source, no CA beside insecureSkipVerify, and one set of credentials per host
// containerd contacts (its credentials are keyed by that host).
func validateRegistries(regs []bootstrapv1.Registry, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	hosts := make([]string, 0, len(regs))
	credsByHost := map[string]string{}
	for i, r := range regs {
		p := path.Index(i)
		hosts = append(hosts, r.Host)
		if problem := registryHostProblem(r.Host); problem != "" {
			errs = append(errs, field.Invalid(p.Child("host"), r.Host, problem))
		}
		if r.Host == bootstrapv1.DefaultRegistryHost && r.Credentials != nil {
			errs = append(errs, field.Forbidden(p.Child("credentials"), "credentials are sent to a host by name: _default has no host of its own; set them on its mirrors"))
		}
		errs = append(errs, validateAccess(r.RegistryAccess, p, credsByHost, userdata.CredentialsHost(r.Host))...)
		urls := make([]string, 0, len(r.Mirrors))
		for j, m := range r.Mirrors {
			mp := p.Child("mirrors").Index(j)
			urls = append(urls, m.URL)
			if errs2 := validateURL(m.URL, mp.Child("url"), false); len(errs2) > 0 {
				errs = append(errs, errs2...)
				continue
			}
			u, _ := url.Parse(m.URL)
			if u.RawQuery != "" || u.Fragment != "" {
				errs = append(errs, field.Invalid(mp.Child("url"), m.URL, "must not have a query or fragment"))
			}
			errs = append(errs, duplicates(capabilityStrings(m.Capabilities), strings.ToLower, mp.Child("capabilities"), "", "")...)
			errs = append(errs, validateAccess(m.RegistryAccess, mp, credsByHost, u.Host)...)
		}
		errs = append(errs, duplicates(urls, strings.ToLower, p.Child("mirrors"), "url", "")...)
	}
	return append(errs, duplicates(hosts, strings.ToLower, path, "host", "")...)
}

func registryHostProblem(host string) string {
	if host == bootstrapv1.DefaultRegistryHost {
		return ""
	}
	if !userdata.RegistryHost.MatchString(host) {
		return "must be a registry host as image names spell it, e.g. registry.k8s.io or registry.corp.example:5000 (lower case, no scheme or path), or _default"
	}
	if i := strings.LastIndex(host, ":"); i > 0 {
		if port, _ := strconv.Atoi(host[i+1:]); port < 1 || port > 65535 {
			return "port must be between 1 and 65535"
		}
	}
	return ""
}

func validateAccess(a bootstrapv1.RegistryAccess, path *field.Path, credsByHost map[string]string, host string) field.ErrorList {
	var errs field.ErrorList
	if a.CA != nil {
		errs = append(errs, validateCABundle(a.CA, path.Child("ca"))...)
		if a.InsecureSkipVerify {
			errs = append(errs, field.Forbidden(path.Child("insecureSkipVerify"), "set either ca or insecureSkipVerify, not both: with insecureSkipVerify the ca is not used"))
		}
	}
	if a.Credentials == nil {
		return errs
	}
	for _, msg := range validation.IsDNS1123Subdomain(a.Credentials.Name) {
		errs = append(errs, field.Invalid(path.Child("credentials", "name"), a.Credentials.Name, "Secret name: "+msg))
	}
	if prev, ok := credsByHost[host]; ok && prev != a.Credentials.Name {
		errs = append(errs, field.Invalid(path.Child("credentials", "name"), a.Credentials.Name,
			fmt.Sprintf("containerd keeps one set of credentials per host: %s already gets them from Secret %s", host, prev)))
	}
	credsByHost[host] = a.Credentials.Name
	return errs
}

func validateCABundle(ca *bootstrapv1.CABundle, path *field.Path) field.ErrorList {
	set := 0
	for _, b := range []bool{ca.Content != "", ca.Secret != nil, ca.ConfigMap != nil} {
		if b {
			set++
		}
	}
	switch {
	case set != 1:
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, "set exactly one of content, secret and configMap")}
	case ca.Content != "":
		if problem := PEMCertificatesProblem(ca.Content); problem != "" {
			return field.ErrorList{field.Invalid(path.Child("content"), field.OmitValueType{}, "content "+problem)}
		}
	case ca.Secret != nil:
		return validateSecretKey(*ca.Secret, path.Child("secret"))
	default:
		var errs field.ErrorList
		for _, msg := range validation.IsDNS1123Subdomain(ca.ConfigMap.Name) {
			errs = append(errs, field.Invalid(path.Child("configMap", "name"), ca.ConfigMap.Name, "ConfigMap name: "+msg))
		}
		for _, msg := range validation.IsConfigMapKey(ca.ConfigMap.Key) {
			errs = append(errs, field.Invalid(path.Child("configMap", "key"), ca.ConfigMap.Key, "ConfigMap key: "+msg))
		}
		return errs
	}
	return nil
}

func capabilityStrings(caps []bootstrapv1.MirrorCapability) []string {
	out := make([]string, 0, len(caps))
	for _, c := range caps {
		out = append(out, string(c))
	}
	return out
}

// registryWarnings point out endpoints whose certificates are not verified and credentials sent
// over plain http.
func registryWarnings(regs []bootstrapv1.Registry, path *field.Path) []string {
	var out []string
	for i, r := range regs {
		p := path.Index(i)
		if r.InsecureSkipVerify {
			out = append(out, fmt.Sprintf("%s: insecureSkipVerify: anyone on the network path can serve this registry's images to the node", p.Child("insecureSkipVerify")))
		}
		for j, m := range r.Mirrors {
			mp := p.Child("mirrors").Index(j)
			if m.InsecureSkipVerify {
				out = append(out, fmt.Sprintf("%s: insecureSkipVerify: anyone on the network path can serve images through this mirror", mp.Child("insecureSkipVerify")))
			}
			if strings.HasPrefix(m.URL, "http://") && m.Credentials != nil {
				out = append(out, fmt.Sprintf("%s: credentials go over plain http to %s", mp.Child("credentials"), m.URL))
			}
		}
	}
	return out
}

// PEMCertificatesProblem says why data is not a bundle of PEM certificates ("" when it is).
func PEMCertificatesProblem(data string) string {
	rest, n := []byte(data), 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return "holds a PEM block of type " + block.Type + ", want only CERTIFICATE blocks"
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "holds a certificate that does not parse: " + err.Error()
		}
		n++
	}
	if n == 0 || strings.TrimSpace(string(rest)) != "" {
		return "is not PEM certificate data (-----BEGIN CERTIFICATE----- blocks)"
	}
	return ""
}
