package lend

import (
	"errors"
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

const (
	thumbA = "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD"
	thumbB = "11:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD"
	caA    = "-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n"
	caB    = "-----BEGIN CERTIFICATE-----\nB\n-----END CERTIFICATE-----\n"
)

func TestVCenterServer(t *testing.T) {
	id := &infrav1.VCenterClusterIdentity{}
	id.Name = "platform"
	id.Spec.Servers = []infrav1.VCenterIdentityServer{
		{Server: "https://vc1.example.com", Thumbprint: thumbA},
		{Server: "https://vc2.example.com:8443/", CABundle: []byte(caA)},
	}
	for name, tc := range map[string]struct {
		spec  infrav1.VCenterClusterSpec
		field string // "" when lent
		want  string // the entry's server when lent
	}{
		"listed, no check of its own":        {spec: infrav1.VCenterClusterSpec{Server: "https://vc1.example.com"}, want: "https://vc1.example.com"},
		"case, final slash and default port": {spec: infrav1.VCenterClusterSpec{Server: "https://VC1.example.com:443/"}, want: "https://vc1.example.com"},
		"the identity's thumbprint":          {spec: infrav1.VCenterClusterSpec{Server: "https://vc1.example.com", Thumbprint: "aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd"}, want: "https://vc1.example.com"},
		"the identity's CA":                  {spec: infrav1.VCenterClusterSpec{Server: "https://vc2.example.com:8443", CABundle: []byte(caA + "\n")}, want: "https://vc2.example.com:8443/"},
		"attacker's server":                  {spec: infrav1.VCenterClusterSpec{Server: "https://vc.attacker.example"}, field: "spec.server"},
		"listed host, other port":            {spec: infrav1.VCenterClusterSpec{Server: "https://vc2.example.com"}, field: "spec.server"},
		"userinfo trick":                     {spec: infrav1.VCenterClusterSpec{Server: "https://vc1.example.com@vc.attacker.example"}, field: "spec.server"},
		"insecure":                           {spec: infrav1.VCenterClusterSpec{Server: "https://vc1.example.com", Insecure: true}, field: "spec.insecure"},
		"own thumbprint":                     {spec: infrav1.VCenterClusterSpec{Server: "https://vc1.example.com", Thumbprint: thumbB}, field: "spec.thumbprint"},
		"own CA":                             {spec: infrav1.VCenterClusterSpec{Server: "https://vc2.example.com:8443", CABundle: []byte(caB)}, field: "spec.caBundle"},
		"CA where the identity pins":         {spec: infrav1.VCenterClusterSpec{Server: "https://vc1.example.com", CABundle: []byte(caA)}, field: "spec.caBundle"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := VCenterServer(id, &tc.spec)
			checkRefusal(t, err, tc.field)
			if tc.field == "" && got.Server != tc.want {
				t.Fatalf("entry %q, want %q", got.Server, tc.want)
			}
		})
	}
	none := &infrav1.VCenterClusterIdentity{}
	_, err := VCenterServer(none, &infrav1.VCenterClusterSpec{Server: "https://vc1.example.com"})
	checkRefusal(t, err, "spec.identityRef")
}

func TestHyperVHost(t *testing.T) {
	id := &infrav1.HyperVClusterIdentity{}
	id.Name = "hosts"
	id.Spec.Hosts = []infrav1.HyperVIdentityHosts{
		{Addresses: []string{"hv1.example.com", "*.hv.example.com", "10.1.0.0/24", "fd00::7"}, CABundle: []byte(caA)},
		{Addresses: []string{"lab.example.com"}, Port: 5985, AuthType: infrav1.WinRMAuthBasic},
	}
	for name, tc := range map[string]struct {
		host  infrav1.HyperVHost
		field string
	}{
		"name":                  {host: infrav1.HyperVHost{Address: "HV1.example.com."}},
		"below a wildcard":      {host: infrav1.HyperVHost{Address: "a.b.hv.example.com"}},
		"in the range":          {host: infrav1.HyperVHost{Address: "10.1.0.77", Port: 5986, AuthType: infrav1.WinRMAuthNTLM}},
		"IPv6":                  {host: infrav1.HyperVHost{Address: "fd00:0::7"}},
		"the identity's CA":     {host: infrav1.HyperVHost{Address: "hv1.example.com", CABundle: []byte(caA)}},
		"second entry":          {host: infrav1.HyperVHost{Address: "lab.example.com", Port: 5985, AuthType: infrav1.WinRMAuthBasic}},
		"attacker's host":       {host: infrav1.HyperVHost{Address: "evil.example"}, field: "spec.hosts[0].address"},
		"wildcard apex":         {host: infrav1.HyperVHost{Address: "hv.example.com"}, field: "spec.hosts[0].address"},
		"suffix trick":          {host: infrav1.HyperVHost{Address: "evilhv.example.com"}, field: "spec.hosts[0].address"},
		"outside the range":     {host: infrav1.HyperVHost{Address: "10.1.1.1"}, field: "spec.hosts[0].address"},
		"name never matches IP": {host: infrav1.HyperVHost{Address: "10.1.0.5.nip.io"}, field: "spec.hosts[0].address"},
		"Basic where NTLM":      {host: infrav1.HyperVHost{Address: "hv1.example.com", AuthType: infrav1.WinRMAuthBasic}, field: "spec.hosts[0].authType"},
		"other port":            {host: infrav1.HyperVHost{Address: "hv1.example.com", Port: 443}, field: "spec.hosts[0].port"},
		"own CA":                {host: infrav1.HyperVHost{Address: "hv1.example.com", CABundle: []byte(caB)}, field: "spec.hosts[0].caBundle"},
		"insecure":              {host: infrav1.HyperVHost{Address: "hv1.example.com", InsecureSkipTLSVerify: true}, field: "spec.hosts[0].insecureSkipTLSVerify"},
		"second entry's port":   {host: infrav1.HyperVHost{Address: "lab.example.com", AuthType: infrav1.WinRMAuthBasic}, field: "spec.hosts[0].port"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := HyperVHost(id, tc.host, "spec.hosts[0]")
			checkRefusal(t, err, tc.field)
		})
	}
	_, err := HyperVHost(&infrav1.HyperVClusterIdentity{}, infrav1.HyperVHost{Address: "hv1.example.com"}, "spec.hosts[0]")
	checkRefusal(t, err, "spec.credentialsRef")
}

func TestAddressProblem(t *testing.T) {
	for entry, ok := range map[string]bool{
		"hv1.example.com": true, "*.hv.example.com": true, "10.0.0.1": true, "10.0.0.0/8": true, "fd00::/64": true,
		"HV1.example.com": false, "*": false, "*.": false, "a.*.example.com": false, "10.0.0.0/33": false, "-a.example.com": false,
	} {
		if got := AddressProblem(entry) == ""; got != ok {
			t.Errorf("%q: valid %v, want %v (%s)", entry, got, ok, AddressProblem(entry))
		}
	}
}

// checkRefusal fails unless err is nil (field "") or a *Refusal of field.
func checkRefusal(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("got %v, want a refusal of %s", err, field)
	}
	if r.Field != field {
		t.Fatalf("refused %s (%s), want %s", r.Field, r.Detail, field)
	}
}
