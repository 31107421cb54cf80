package webhooks

import (
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// ValidateClusterSpec returns every problem of a VCenterClusterSpec, each with its field path
// below path (spec for a VCenterCluster, spec.template.spec for a template).
func ValidateClusterSpec(spec infrav1.VCenterClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if problem := serverProblem(spec.Server); problem != "" {
		errs = append(errs, field.Invalid(path.Child("server"), spec.Server, problem))
	}
	if spec.Thumbprint != "" {
		if problem := thumbprintProblem(spec.Thumbprint); problem != "" {
			errs = append(errs, field.Invalid(path.Child("thumbprint"), spec.Thumbprint, problem))
		}
	}
	if len(spec.CABundle) > 0 {
		if problem := caBundleProblem(spec.CABundle); problem != "" {
			// The bundle is not echoed: it may be long, and a pasted private key must not be logged.
			errs = append(errs, field.Invalid(path.Child("caBundle"), field.OmitValueType{}, problem))
		}
	}
	seen := map[string]int{}
	fds := path.Child("failureDomains")
	for i, fd := range spec.FailureDomains {
		if j, ok := seen[fd.Name]; ok {
			errs = append(errs, duplicate(fds.Index(i).Child("name"), fd.Name, fmt.Sprintf("same as %s", fds.Index(j).Child("name"))))
			continue
		}
		seen[fd.Name] = i
		errs = append(errs, failureDomainProblems(fd, fds.Index(i))...)
		errs = append(errs, inventoryPaths(fd.Placement, fds.Index(i).Child("placement"))...)
		for j, n := range fd.Networks {
			if problem := inventoryPathProblem(n); problem != "" {
				errs = append(errs, field.Invalid(fds.Index(i).Child("networks").Index(j), n, problem))
			}
		}
	}
	if problem := inventoryPathProblem(spec.Datacenter); problem != "" {
		errs = append(errs, field.Invalid(path.Child("datacenter"), spec.Datacenter, problem))
	}
	return errs
}

// serverProblem explains why s is not a vCenter base URL ("" if it is one). The schema's pattern
// lets through user info, queries, fragments and empty hosts, which govmomi would mishandle.
func serverProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "must be a URL such as https://vcenter.example.com: " + err.Error()
	case u.Scheme != "https":
		return "must use https"
	case u.User != nil:
		return "must not carry credentials: put them in the identityRef Secret"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return "must not have a query or fragment"
	case u.Hostname() == "":
		return "must name a host"
	case u.Path != "" && u.Path != "/":
		return "must not have a path: the SDK path is added by the provider"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "port must be between 1 and 65535"
		}
	}
	return ""
}

// thumbprintProblem explains why t is not a SHA-1 or SHA-256 certificate fingerprint written as
// colon-separated hex pairs ("" if it is one).
func thumbprintProblem(t string) string {
	b, err := hex.DecodeString(strings.ReplaceAll(t, ":", ""))
	if err != nil || len(t) != 3*len(b)-1 || (len(b) != 20 && len(b) != 32) {
		return "must be a SHA-256 (32 bytes) or SHA-1 (20 bytes) fingerprint as colon-separated hex pairs, e.g. AB:CD:..."
	}
	for i := 2; i < len(t); i += 3 {
		if t[i] != ':' {
			return "must separate every hex pair with a colon"
		}
	}
	return ""
}

// caBundleProblem explains why b is not a PEM bundle of x509 certificates ("" if it is one).
func caBundleProblem(b []byte) string {
	certs := 0
	for n := 1; ; n++ {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Sprintf("PEM block %d is a %s: a CA bundle holds only CERTIFICATE blocks", n, block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Sprintf("PEM block %d is not an x509 certificate: %v", n, err)
		}
		certs++
	}
	if certs == 0 {
		return "must contain at least one PEM-encoded x509 certificate (-----BEGIN CERTIFICATE-----)"
	}
	return ""
}
