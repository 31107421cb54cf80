package webhooks_test

import (
	"strings"
	"testing"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// TestActiveDirectoryAdmission: a domain join is refused with the field's path when the domain is
// no DNS name, the OU is no distinguished name inside the domain, or a DNS server is no IP.
func TestActiveDirectoryAdmission(t *testing.T) {
	apiServer(t)
	ad := func(domain, ou string, dns ...string) func(*bootstrapv1.WindowsConfigSpec) {
		return func(s *bootstrapv1.WindowsConfigSpec) {
			s.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: domain, OrganizationalUnit: ou, DNSServers: dns,
				Credentials: &bootstrapv1.SecretName{Name: "domain-join"}}
		}
	}
	runAdmission(t, "ad", []admissionCase{
		{"domain, OU and DNS servers", ad("corp.example.com", `OU=Kubernetes\, Windows,OU=Servers,DC=corp,DC=example,DC=com`, "10.0.0.53", "fd00::53"), "", ""},
		{"default container", ad("CORP.example.com", ""), "", ""},
		{"empty: no domain join", func(s *bootstrapv1.WindowsConfigSpec) { s.ActiveDirectory = &bootstrapv1.ActiveDirectory{} }, "", ""},
		{"OU without a domain (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.ActiveDirectory = &bootstrapv1.ActiveDirectory{OrganizationalUnit: "OU=K8s,DC=corp,DC=com"}
		}, "spec.activeDirectory", "set domain and credentials"},
		{"domain without credentials (CEL)", func(s *bootstrapv1.WindowsConfigSpec) {
			s.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: "corp.example.com"}
		}, "spec.activeDirectory", "set domain and credentials"},
		{"NetBIOS name (CRD)", ad("CORP", ""), "spec.activeDirectory.domain", "should match"},
		{"OU that is no DN", ad("corp.example.com", "Kubernetes nodes"), "spec.activeDirectory.organizationalUnit", "distinguished name"},
		{"OU in another domain", ad("corp.example.com", "OU=K8s,DC=example,DC=com"), "spec.activeDirectory.organizationalUnit", "must spell the domain corp.example.com"},
		{"DC before OU", ad("corp.example.com", "DC=corp,OU=K8s,DC=example,DC=com"), "spec.activeDirectory.organizationalUnit", "come before the DC= parts"},
		{"DNS server name", ad("corp.example.com", "", "dc1.corp.example.com"), "spec.activeDirectory.dnsServers[0]", "IPv4 or IPv6 address"},
	})
}

// TestDirectoryAdmission: groups and account deletion need the manager's directory access, which
// needs the OU it acts in; groups are DNs in the domain; the URL is ldaps or ldap with a host.
func TestDirectoryAdmission(t *testing.T) {
	apiServer(t)
	const ou = "OU=Kubernetes,DC=corp,DC=example,DC=com"
	ad := func(change func(*bootstrapv1.ActiveDirectory)) func(*bootstrapv1.WindowsConfigSpec) {
		return func(s *bootstrapv1.WindowsConfigSpec) {
			s.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: "corp.example.com", OrganizationalUnit: ou,
				Credentials:      &bootstrapv1.SecretName{Name: "domain-join"},
				Groups:           []string{"CN=WebApp01 hosts,OU=Groups,DC=corp,DC=example,DC=com"},
				ComputerAccounts: &bootstrapv1.ComputerAccounts{DeletePolicy: bootstrapv1.ComputerAccountDelete, Reuse: bootstrapv1.ComputerAccountRefuse},
				Directory: &bootstrapv1.Directory{URL: "ldaps://dc1.corp.example.com", Credentials: bootstrapv1.SecretName{Name: "ad-cleanup"},
					CA: &bootstrapv1.CABundle{Secret: &bootstrapv1.SecretKey{Name: "corp-ca", Key: "ca.crt"}}}}
			change(s.ActiveDirectory)
		}
	}
	runAdmission(t, "dir", []admissionCase{
		{"groups, delete and directory", ad(func(*bootstrapv1.ActiveDirectory) {}), "", ""},
		{"StartTLS with a port", ad(func(a *bootstrapv1.ActiveDirectory) { a.Directory.URL = "ldap://10.0.0.10:389" }), "", ""},
		{"reuse only, no directory", ad(func(a *bootstrapv1.ActiveDirectory) {
			a.Directory, a.Groups, a.ComputerAccounts = nil, nil, &bootstrapv1.ComputerAccounts{Reuse: bootstrapv1.ComputerAccountAllow}
		}), "", ""},
		{"groups without directory (CEL)", ad(func(a *bootstrapv1.ActiveDirectory) { a.Directory, a.ComputerAccounts = nil, nil }),
			"spec.activeDirectory", "need directory"},
		{"delete without directory (CEL)", ad(func(a *bootstrapv1.ActiveDirectory) { a.Directory, a.Groups = nil, nil }),
			"spec.activeDirectory", "need directory"},
		{"directory without OU (CEL)", ad(func(a *bootstrapv1.ActiveDirectory) { a.OrganizationalUnit = "" }),
			"spec.activeDirectory", "needs domain and organizationalUnit"},
		{"unknown policy (CRD)", ad(func(a *bootstrapv1.ActiveDirectory) { a.ComputerAccounts.DeletePolicy = "Purge" }),
			"spec.activeDirectory.computerAccounts.deletePolicy", "Unsupported value"},
		{"https URL (CRD)", ad(func(a *bootstrapv1.ActiveDirectory) { a.Directory.URL = "https://dc1.corp.example.com" }),
			"spec.activeDirectory.directory.url", "should match"},
		{"bad port", ad(func(a *bootstrapv1.ActiveDirectory) { a.Directory.URL = "ldaps://dc1:99999" }),
			"spec.activeDirectory.directory.url", "ldaps://HOST[:PORT]"},
		{"group in another domain", ad(func(a *bootstrapv1.ActiveDirectory) { a.Groups = []string{"CN=hosts,DC=other,DC=com"} }),
			"spec.activeDirectory.groups[0]", "must spell the domain"},
		{"group twice", ad(func(a *bootstrapv1.ActiveDirectory) { a.Groups = append(a.Groups, strings.ToUpper(a.Groups[0])) }),
			"spec.activeDirectory.groups[1]", "Duplicate"},
		{"CA content no PEM", ad(func(a *bootstrapv1.ActiveDirectory) { a.Directory.CA = &bootstrapv1.CABundle{Content: "junk"} }),
			"spec.activeDirectory.directory.ca.content", "PEM"},
	})
}
