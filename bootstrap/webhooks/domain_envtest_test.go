package webhooks_test

import (
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
