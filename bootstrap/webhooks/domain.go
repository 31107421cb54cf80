package webhooks

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// validateActiveDirectory checks what the schema cannot: the OU is a distinguished name inside
// the domain, the DNS servers are IP addresses, the Secret name is one.
func validateActiveDirectory(ad *bootstrapv1.ActiveDirectory, path *field.Path) field.ErrorList {
	if ad == nil {
		return nil
	}
	if noDomainJoin(ad) {
		return nil
	}
	var errs field.ErrorList
	if ad.Domain == "" {
		errs = append(errs, field.Required(path.Child("domain"), "the domain's DNS name ({} means no domain join)"))
	}
	if ad.Credentials == nil {
		return append(errs, field.Required(path.Child("credentials"), "a Secret with the join account's username and password"))
	}
	if ad.OrganizationalUnit != "" {
		if problem := ouProblem(ad.OrganizationalUnit, ad.Domain); problem != "" {
			errs = append(errs, field.Invalid(path.Child("organizationalUnit"), ad.OrganizationalUnit, problem))
		}
	}
	for i, s := range ad.DNSServers {
		if _, err := netip.ParseAddr(s); err != nil {
			errs = append(errs, field.Invalid(path.Child("dnsServers").Index(i), s, "must be an IPv4 or IPv6 address"))
		}
	}
	errs = append(errs, duplicates(ad.DNSServers, strings.ToLower, path.Child("dnsServers"), "", "")...)
	errs = append(errs, secretNameErrors(ad.Credentials.Name, path.Child("credentials", "name"))...)
	for i, g := range ad.Groups {
		if problem := ouProblem(g, ad.Domain); problem != "" {
			errs = append(errs, field.Invalid(path.Child("groups").Index(i), g, problem))
		}
	}
	errs = append(errs, duplicates(ad.Groups, strings.ToLower, path.Child("groups"), "", "")...)
	return append(errs, validateDirectory(ad.Directory, path.Child("directory"))...)
}

// validateDirectory checks the manager's LDAP server address, CA and Secret name.
func validateDirectory(d *bootstrapv1.Directory, path *field.Path) field.ErrorList {
	if d == nil {
		return nil
	}
	var errs field.ErrorList
	u, err := url.Parse(d.URL)
	if err != nil || u.Hostname() == "" || u.Path != "" || u.User != nil || (u.Port() != "" && !validPort(u.Port())) {
		errs = append(errs, field.Invalid(path.Child("url"), d.URL, "must be ldaps://HOST[:PORT] or ldap://HOST[:PORT] (StartTLS)"))
	}
	if d.CA != nil {
		errs = append(errs, validateCABundle(d.CA, path.Child("ca"))...)
	}
	return append(errs, secretNameErrors(d.Credentials.Name, path.Child("credentials", "name"))...)
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 65536
}

func secretNameErrors(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, "Secret name: "+msg))
	}
	return errs
}

// noDomainJoin reports an empty activeDirectory ({}), what the templates pass for "no domain join".
func noDomainJoin(ad *bootstrapv1.ActiveDirectory) bool {
	return ad.Domain == "" && ad.Credentials == nil && ad.OrganizationalUnit == "" && len(ad.DNSServers) == 0 &&
		ad.ComputerAccounts == nil && len(ad.Groups) == 0 && ad.Directory == nil
}

// ouProblem checks a distinguished name like OU=Kubernetes,OU=Servers,DC=corp,DC=example,DC=com:
// OU and CN parts first, then the domain's DC parts, in the domain's order.
func ouProblem(dn, domain string) string {
	if strings.ContainsFunc(dn, unicode.IsControl) {
		return "must not contain control characters"
	}
	var dcs []string
	for _, part := range splitDN(dn) {
		attr, value, ok := strings.Cut(part, "=")
		attr = strings.ToUpper(strings.TrimSpace(attr))
		switch {
		case !ok || strings.TrimSpace(value) == "":
			return "must be a distinguished name such as OU=Kubernetes,DC=corp,DC=example,DC=com (part " + part + " has no value)"
		case attr == "DC":
			dcs = append(dcs, strings.TrimSpace(value))
		case attr != "OU" && attr != "CN":
			return "parts must be OU=, CN= or DC= (found " + attr + "=)"
		case len(dcs) > 0:
			return "the OU= and CN= parts come before the DC= parts"
		}
	}
	if !strings.EqualFold(strings.Join(dcs, "."), domain) {
		return "its DC= parts must spell the domain " + domain + " (DC=" + strings.ReplaceAll(domain, ".", ",DC=") + ")"
	}
	return ""
}

// splitDN splits a distinguished name at the commas that are not escaped with a backslash.
func splitDN(dn string) []string {
	var parts []string
	var cur strings.Builder
	escaped := false
	for _, r := range dn {
		switch {
		case escaped:
			escaped = false
			cur.WriteRune(r)
		case r == '\\':
			escaped = true
			cur.WriteRune(r)
		case r == ',':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	return append(parts, cur.String())
}
