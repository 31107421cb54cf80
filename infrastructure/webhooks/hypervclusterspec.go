package webhooks

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// defaultWinRMPort is the WinRM HTTPS port (the CRD's default of a host's port).
const defaultWinRMPort = 5986

// ValidateHyperVClusterSpec returns every problem of a HyperVClusterSpec, each with its field path
// below path (spec for a HyperVCluster, spec.template.spec for a template).
func ValidateHyperVClusterSpec(spec infrav1.HyperVClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{{"vmPath", spec.VMPath}, {"diskPath", spec.DiskPath}} {
		if problem := windowsPathProblem(f.value); f.value != "" && problem != "" {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, problem))
		}
	}
	errs = append(errs, validateHyperVHosts(spec.Hosts, path.Child("hosts"))...)
	errs = append(errs, validateFailoverCluster(spec.FailoverCluster, path.Child("failoverCluster"))...)
	return append(errs, validateHyperVFailureDomains(spec, path)...)
}

// validateFailoverCluster checks that the VMs of a failover cluster go to a Cluster Shared Volume:
// a folder on one node's local disk would leave a VM that no other node can start.
func validateFailoverCluster(fc *infrav1.HyperVFailoverCluster, path *field.Path) field.ErrorList {
	if fc == nil {
		return nil
	}
	at := path.Child("storagePath")
	if problem := windowsPathProblem(fc.StoragePath); problem != "" {
		return field.ErrorList{field.Invalid(at, fc.StoragePath, problem)}
	}
	if !infrav1.OnClusterSharedVolume(fc.StoragePath) {
		return field.ErrorList{field.Invalid(at, fc.StoragePath, `must be a folder on a Cluster Shared Volume, C:\ClusterStorage\<volume>\<folder>, which every node of the failover cluster sees at the same path`)}
	}
	return nil
}

func validateHyperVHosts(hosts []infrav1.HyperVHost, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, endpoints := map[string]int{}, map[string]int{}
	for i, h := range hosts {
		at := path.Index(i)
		if j, ok := names[h.Name]; ok {
			errs = append(errs, duplicate(at.Child("name"), h.Name, fmt.Sprintf("same as %s", path.Index(j).Child("name"))))
		} else {
			names[h.Name] = i
		}
		if problem := hostAddressProblem(h.Address); problem != "" {
			errs = append(errs, field.Invalid(at.Child("address"), h.Address, problem))
		} else if j, ok := endpoints[winRMEndpoint(h)]; ok {
			errs = append(errs, duplicate(at.Child("address"), h.Address,
				fmt.Sprintf("same address and port as %s: list each host once", path.Index(j))))
		} else {
			endpoints[winRMEndpoint(h)] = i
		}
		if len(h.CABundle) > 0 {
			if problem := caBundleProblem(h.CABundle); problem != "" {
				// The bundle is not echoed: it may be long, and a pasted private key must not be logged.
				errs = append(errs, field.Invalid(at.Child("caBundle"), field.OmitValueType{}, problem))
			}
		}
	}
	return errs
}

// validateHyperVFailureDomains checks that the failure domains are unique, that every host's
// failure domain is one of them, and that every failure domain has a host: a Machine placed in
// an empty one could never get a VM.
func validateHyperVFailureDomains(spec infrav1.HyperVClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	fds := path.Child("failureDomains")
	first := map[string]int{}   // failure domain -> index of its entry
	hostsIn := map[string]int{} // failure domain -> number of hosts
	for i, fd := range spec.FailureDomains {
		if j, ok := first[fd.Name]; ok {
			errs = append(errs, duplicate(fds.Index(i).Child("name"), fd.Name, fmt.Sprintf("same as %s", fds.Index(j).Child("name"))))
			continue
		}
		first[fd.Name] = i
	}
	for i, h := range spec.Hosts {
		if h.FailureDomain == "" {
			continue
		}
		if _, ok := first[h.FailureDomain]; !ok {
			errs = append(errs, field.Invalid(path.Child("hosts").Index(i).Child("failureDomain"), h.FailureDomain,
				fmt.Sprintf("names no entry of %s: add it there or correct the name", fds)))
			continue
		}
		hostsIn[h.FailureDomain]++
	}
	for i, fd := range spec.FailureDomains {
		if first[fd.Name] == i && hostsIn[fd.Name] == 0 {
			errs = append(errs, field.Invalid(fds.Index(i).Child("name"), fd.Name, fmt.Sprintf(
				"has no host: set failureDomain: %s on a host of %s, or remove the failure domain; a Machine placed in it could not get a VM",
				fd.Name, path.Child("hosts"))))
		}
	}
	return errs
}

// hostAddressProblem explains why a is not a host name or IP address ("" if it is one). capwin
// builds the WinRM URL from address and port, so a scheme, port or brackets would break it.
func hostAddressProblem(a string) string {
	if ip, err := netip.ParseAddr(a); err == nil {
		if ip.Zone() != "" {
			return "must not carry an IPv6 zone"
		}
		return ""
	}
	switch {
	case strings.Contains(a, "://"):
		return "must be a host name or IP address, not a URL: capwin connects to https://<address>:<port>/wsman"
	case strings.HasPrefix(a, "["):
		return "must be an IPv6 address without brackets"
	case strings.Contains(a, ":"):
		return "must not carry a port: set port"
	case len(validation.IsDNS1123Subdomain(strings.ToLower(a))) > 0:
		return "must be an IP address or a DNS name (letters, digits, '-' and '.'; each label starts and ends with a letter or digit)"
	}
	return ""
}

// winRMEndpoint is the host's address and port, normalized to find one host listed twice.
func winRMEndpoint(h infrav1.HyperVHost) string {
	port := h.Port
	if port == 0 {
		port = defaultWinRMPort
	}
	address := strings.ToLower(h.Address)
	if ip, err := netip.ParseAddr(address); err == nil {
		address = ip.String()
	}
	return address + "/" + strconv.Itoa(int(port))
}
