package webhooks

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// withOptions sets device 0 to a static IPv4 address in 10.0.0.0/24 with the given routes, MTU
// and search domains, on a Windows machine whose launcher applies them (guestCredentialsRef; a
// case that clears it has the bootstrap's network step apply them).
func withOptions(mtu int32, search []string, routes ...infrav1.NetworkRoute) func(*infrav1.VCenterMachineSpec) {
	return func(s *infrav1.VCenterMachineSpec) {
		s.GuestCredentialsRef = &infrav1.SecretReference{Name: "admin"}
		s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", IPAddrs: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1",
			NetworkDeviceOptions: infrav1.NetworkDeviceOptions{Routes: routes, SearchDomains: search}}
		if mtu != 0 {
			s.Network[0].MTU = ptr.To(mtu)
		}
	}
}

func via(to, hop string) infrav1.NetworkRoute { return infrav1.NetworkRoute{To: to, Via: hop} }

func TestValidateNetworkOptions(t *testing.T) {
	cases := []specCase[infrav1.VCenterMachineSpec]{
		{"route in the subnet with metric", withOptions(1400, []string{"corp.example.com"},
			infrav1.NetworkRoute{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: ptr.To[int32](10)}), "", ""},
		{"two next hops to one network", withOptions(0, nil, via("10.20.0.0/16", "10.0.0.253"), via("10.20.0.0/16", "10.0.0.254")), "", ""},
		{"IPv6 link-local next hop", func(s *infrav1.VCenterMachineSpec) {
			withOptions(0, nil)(s)
			s.Network[0].IPAddrs = append(s.Network[0].IPAddrs, "fd00::5/64")
			s.Network[0].Routes = []infrav1.NetworkRoute{via("fd20::/48", "fe80::1")}
		}, "", ""},
		{"DHCP device: next hop not checked", func(s *infrav1.VCenterMachineSpec) {
			s.GuestCredentialsRef = &infrav1.SecretReference{Name: "admin"}
			s.Network[0].Routes = []infrav1.NetworkRoute{via("10.20.0.0/16", "192.168.7.1")}
		}, "", ""},
		{"Linux: cloud-init applies routes and search domains", func(s *infrav1.VCenterMachineSpec) {
			withOptions(0, []string{"corp.example.com"}, via("10.20.0.0/16", "10.0.0.254"))(s)
			s.OS, s.GuestCredentialsRef = infrav1.OSLinux, nil
		}, "", ""},
		{"cloudbase-init applies the MTU", func(s *infrav1.VCenterMachineSpec) { s.Network[0].MTU = ptr.To[int32](9000) }, "", ""},
		// The bootstrap's network step applies what cloudbase-init leaves out (issue 28).
		{"routes with cloudbase-init", func(s *infrav1.VCenterMachineSpec) {
			withOptions(0, nil, infrav1.NetworkRoute{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: ptr.To[int32](50)})(s)
			s.GuestCredentialsRef = nil
		}, "", ""},
		{"search domains with cloudbase-init", func(s *infrav1.VCenterMachineSpec) {
			withOptions(1400, []string{"corp.example.com"})(s)
			s.GuestCredentialsRef = nil
		}, "", ""},

		{"route next hop outside the subnet", withOptions(0, nil, via("10.20.0.0/16", "10.0.1.1")),
			"spec.network[0].routes[0].via", "is not in the subnet of any static IPv4 address of the device (10.0.0.0/24)"},
		{"route next hop is the own address", withOptions(0, nil, via("10.20.0.0/16", "10.0.0.21")),
			"spec.network[0].routes[0].via", "is the device's own address"},
		{"IPv6 route without an IPv6 address", withOptions(0, nil, via("fd20::/48", "fd00::1")),
			"spec.network[0].routes[0].via", "the device has no IPv6 address: add a static IPv6 address to ipAddrs, a pool to addressesFromPools, or set dhcp6"},
		{"gateway6 outside the subnet", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0] = infrav1.NetworkDevice{NetworkName: "n", IPAddrs: []string{"fd00::5/64"}, Gateway6: "fd01::1"}
		}, "spec.network[0].gateway6", "is not in the subnet of any static IPv6 address of the device (fd00::/64)"},
		{"default route beside the gateway", withOptions(0, nil, via("0.0.0.0/0", "10.0.0.254")),
			"spec.network[0].routes[0].to", "the device's gateway already is one"},
		{"same route twice", withOptions(0, nil, via("10.20.0.0/16", "10.0.0.254"), via("10.20.0.0/16", "10.0.0.254")),
			"spec.network[0].routes[1]", "same destination and next hop as spec.network[0].routes[0]"},
		{"MTU below IPv6's minimum", func(s *infrav1.VCenterMachineSpec) {
			s.Network[0].DHCP6, s.Network[0].MTU = true, ptr.To[int32](1000)
		}, "spec.network[0].mtu", "needs an MTU of at least 1280"},
		{"search domain twice", withOptions(0, []string{"example.com", "corp.example.com", "example.com"}),
			"spec.network[0].searchDomains[2]", "same as spec.network[0].searchDomains[0]"},
		{"route next hop outside the subnet with cloudbase-init", func(s *infrav1.VCenterMachineSpec) {
			withOptions(0, nil, via("10.20.0.0/16", "10.0.1.1"))(s)
			s.GuestCredentialsRef = nil
		}, "spec.network[0].routes[0].via", "is not in the subnet of any static IPv4 address"},
	}
	runSpecCases(t, cases, validMachineSpec, func(s infrav1.VCenterMachineSpec) field.ErrorList {
		DefaultMachineSpec(&s)
		return ValidateMachineSpec(s, field.NewPath("spec"))
	})
}

// TestValidateHyperVNetworkOptions: a Hyper-V adapter's options are checked by the same rules,
// under its own field paths.
func TestValidateHyperVNetworkOptions(t *testing.T) {
	cases := []specCase[infrav1.HyperVMachineSpec]{
		{"route next hop outside the subnet", func(s *infrav1.HyperVMachineSpec) {
			s.Network = []infrav1.HyperVNetworkDevice{{IPAddrs: []string{"10.0.0.21/24"},
				NetworkDeviceOptions: infrav1.NetworkDeviceOptions{Routes: []infrav1.NetworkRoute{via("10.20.0.0/16", "10.9.0.1")}}}}
			s.OS = infrav1.OSLinux
		}, "spec.network[0].routes[0].via", "not in the subnet"},
		{"search domains and routes with cloudbase-init", func(s *infrav1.HyperVMachineSpec) {
			s.Network = []infrav1.HyperVNetworkDevice{{DHCP4: true, NetworkDeviceOptions: infrav1.NetworkDeviceOptions{SearchDomains: []string{"example.com"},
				Routes: []infrav1.NetworkRoute{via("10.20.0.0/16", "192.168.7.1")}}}}
		}, "", ""},
		{"search domain twice with cloudbase-init", func(s *infrav1.HyperVMachineSpec) {
			s.Network = []infrav1.HyperVNetworkDevice{{DHCP4: true, NetworkDeviceOptions: infrav1.NetworkDeviceOptions{SearchDomains: []string{"example.com", "example.com"}}}}
		}, "spec.network[0].searchDomains[1]", "same as spec.network[0].searchDomains[0]"},
	}
	runSpecCases(t, cases, validHyperVMachineSpec, func(s infrav1.HyperVMachineSpec) field.ErrorList {
		DefaultHyperVMachineSpec(&s)
		return ValidateHyperVMachineSpec(s, field.NewPath("spec"))
	})
}
