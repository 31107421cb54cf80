// Package lend decides what a cluster identity lends to the clusters that borrow it: the
// endpoints its login may be sent to (servers, hosts) and the hypervisor resources their machines
// may use. The webhooks ask it at admission and the providers again before every login and
// hypervisor call, so a tenant's object never makes capwin act outside what the platform lends.
package lend

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// Refusal says which field of a borrowing object asks for what the identity does not lend.
type Refusal struct {
	// Field is the path of the field in the borrowing object, e.g. spec.server.
	Field string
	// Detail says what is not lent and what to do.
	Detail string
}

func (r *Refusal) Error() string { return r.Field + ": " + r.Detail }

func refuse(field, format string, args ...any) *Refusal {
	return &Refusal{Field: field, Detail: fmt.Sprintf(format, args...)}
}

// VCenterServer returns the identity's servers entry a VCenterCluster may use, or why it may not:
// the cluster's server must be listed, and its certificate check must be the entry's (or left
// unset). The login is then sent with the entry's check only.
func VCenterServer(id *infrav1.VCenterClusterIdentity, spec *infrav1.VCenterClusterSpec) (infrav1.VCenterIdentityServer, error) {
	if len(id.Spec.Servers) == 0 {
		return infrav1.VCenterIdentityServer{}, refuse("spec.identityRef", "VCenterClusterIdentity %s lists no servers (its spec.servers), so it lends its login to no vCenter: ask the platform team to list %s", id.Name, spec.Server)
	}
	var names []string
	for _, s := range id.Spec.Servers {
		names = append(names, s.Server)
		if !sameServer(s.Server, spec.Server) {
			continue
		}
		switch {
		case spec.Insecure:
			return s, refuse("spec.insecure", "VCenterClusterIdentity %s lends its login only with certificate verification: unset insecure", id.Name)
		case spec.Thumbprint != "" && !strings.EqualFold(spec.Thumbprint, s.Thumbprint):
			return s, refuse("spec.thumbprint", "is not the thumbprint VCenterClusterIdentity %s pins for %s: unset it (the identity's check is used) or write the identity's", id.Name, s.Server)
		case len(spec.CABundle) > 0 && !samePEM(spec.CABundle, s.CABundle):
			return s, refuse("spec.caBundle", "is not the CA bundle VCenterClusterIdentity %s trusts for %s: unset it (the identity's check is used) or write the identity's", id.Name, s.Server)
		}
		return s, nil
	}
	return infrav1.VCenterIdentityServer{}, refuse("spec.server", "VCenterClusterIdentity %s does not lend its login to %s (its spec.servers: %s): name one of those, or ask the platform team", id.Name, spec.Server, strings.Join(names, ", "))
}

// HyperVHost returns the identity's hosts entry a HyperVCluster host may use, or why it may not:
// its address must be one of the entry's, its port and authType the entry's, and its CA bundle the
// entry's (or unset); skipping verification is never lent. field is the host's path, e.g.
// spec.hosts[0].
func HyperVHost(id *infrav1.HyperVClusterIdentity, h infrav1.HyperVHost, field string) (infrav1.HyperVIdentityHosts, error) {
	if len(id.Spec.Hosts) == 0 {
		return infrav1.HyperVIdentityHosts{}, refuse("spec.credentialsRef", "HyperVClusterIdentity %s lists no hosts (its spec.hosts), so it lends its login to no host: ask the platform team to list %s", id.Name, h.Address)
	}
	if h.InsecureSkipTLSVerify {
		return infrav1.HyperVIdentityHosts{}, refuse(field+".insecureSkipTLSVerify", "HyperVClusterIdentity %s lends its login only with certificate verification: unset insecureSkipTLSVerify", id.Name)
	}
	var first *Refusal
	for _, e := range id.Spec.Hosts {
		if !addressIn(h.Address, e.Addresses) {
			continue
		}
		r := hostSettings(id.Name, e, h, field)
		if r == nil {
			return e, nil
		}
		if first == nil {
			first = r
		}
	}
	if first != nil {
		return infrav1.HyperVIdentityHosts{}, first
	}
	return infrav1.HyperVIdentityHosts{}, refuse(field+".address", "HyperVClusterIdentity %s does not lend its login to %s (not in its spec.hosts[].addresses): ask the platform team", id.Name, h.Address)
}

// hostSettings compares how a host is reached with an identity's entry that lists its address.
func hostSettings(id string, e infrav1.HyperVIdentityHosts, h infrav1.HyperVHost, field string) *Refusal {
	switch {
	case orDefault(h.Port, 5986) != orDefault(e.Port, 5986):
		return refuse(field+".port", "HyperVClusterIdentity %s lends its login to %s on port %d only", id, h.Address, orDefault(e.Port, 5986))
	case orDefault(h.AuthType, infrav1.WinRMAuthNTLM) != orDefault(e.AuthType, infrav1.WinRMAuthNTLM):
		return refuse(field+".authType", "HyperVClusterIdentity %s lends its login to %s with authType %s only", id, h.Address, orDefault(e.AuthType, infrav1.WinRMAuthNTLM))
	case len(h.CABundle) > 0 && !samePEM(h.CABundle, e.CABundle):
		return refuse(field+".caBundle", "is not the CA bundle HyperVClusterIdentity %s trusts for %s: unset it (the identity's is used) or write the identity's", id, h.Address)
	}
	return nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// sameServer compares two vCenter URLs by host (without case) and port (443 unless written).
func sameServer(a, b string) bool {
	ha, okA := hostPort(a)
	hb, okB := hostPort(b)
	return okA && okB && ha == hb
}

func hostPort(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.Path != "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), port), true
}

func samePEM(a, b []byte) bool { return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) }
