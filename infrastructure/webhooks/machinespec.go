// Package webhooks holds the admission webhooks of the infrastructure provider. The rules are pure
// functions (ValidateMachineSpec, ValidateClusterSpec, DefaultMachineSpec). They check only what
// the CRD schema and its CEL rules cannot (or express badly); the API server runs those first.
package webhooks

import (
	"fmt"
	"net"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// ValidateMachineSpec returns every problem of a VCenterMachineSpec, each with its field path below
// path (spec for a VCenterMachine, spec.template.spec for a template).
func ValidateMachineSpec(spec infrav1.VCenterMachineSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if problem := templatePathProblem(spec.Template); problem != "" {
		errs = append(errs, field.Invalid(path.Child("template"), spec.Template, problem))
	}
	errs = append(errs, inventoryPaths(spec.Placement, path.Child("placement"))...)
	for i, d := range spec.Network {
		if problem := inventoryPathProblem(d.NetworkName); problem != "" {
			errs = append(errs, field.Invalid(path.Child("network").Index(i).Child("networkName"), d.NetworkName, problem))
		}
	}
	// vCenter deploys content library OVF items as new VMs: there is no snapshot to link to.
	if spec.ContentLibrary != "" && spec.CloneMode == infrav1.LinkedClone {
		errs = append(errs, field.Invalid(path.Child("cloneMode"), spec.CloneMode,
			"content library items can only be full-cloned: use cloneMode fullClone with contentLibrary"))
	}
	if spec.GuestCredentialsRef != nil && spec.OS == infrav1.OSLinux {
		errs = append(errs, field.Invalid(path.Child("guestCredentialsRef"), spec.GuestCredentialsRef.Name,
			"runs Windows powershell bootstrap data through VMware Tools; Linux machines bootstrap with cloud-init from guestinfo: remove it"))
	}
	errs = append(errs, validatePCIDevices(spec.PCIDevices, path.Child("pciDevices"))...)
	errs = append(errs, validateNaming(spec.OS, spec.NamingStrategy, path.Child("namingStrategy"))...)
	return append(errs, validateNetwork(spec.Network, path.Child("network"))...)
}

// templatePathProblem explains why t is not a usable inventory path or name ("" if it is one).
func templatePathProblem(t string) string {
	if strings.HasSuffix(t, "/") {
		return "must not end with /: name the VM template, not its folder"
	}
	return inventoryPathProblem(t)
}

// inventoryPathProblem explains why p is not an inventory path or name that names one object
// ("" if it is one): vCenter's finder takes *, ?, [...] as patterns and ... as any depth, so a
// pattern could pick another tenant's object.
func inventoryPathProblem(p string) string {
	if i := strings.IndexAny(p, "*?[]"); i >= 0 {
		return fmt.Sprintf("must not contain %q: it is a pattern to vCenter's finder; name the object by its name or inventory path", p[i])
	}
	for _, segment := range strings.Split(p, "/") {
		switch segment {
		case "..":
			return "must not contain .. segments: vCenter inventory paths are not resolved relatively"
		case "...":
			return "must not contain ... segments: they match any depth of the inventory"
		}
	}
	return ""
}

// inventoryPaths checks the inventory paths of a placement.
func inventoryPaths(p infrav1.Placement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{
		{"datacenter", p.Datacenter}, {"resourcePool", p.ResourcePool}, {"datastore", p.Datastore}, {"folder", p.Folder},
	} {
		if problem := inventoryPathProblem(f.value); problem != "" {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, problem))
		}
	}
	return errs
}

func validateNetwork(devices []infrav1.NetworkDevice, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	macs := map[string]int{} // normalized MAC -> first device index
	for i, d := range devices {
		at := path.Index(i)
		errs = append(errs, validateNextHops(d, at)...)
		errs = append(errs, validateOptions(d, at)...)
		errs = append(errs, validatePools(d, at)...)
		if d.MACAddr == "" {
			continue
		}
		mac, problem := parseUnicastMAC(d.MACAddr)
		if problem != "" {
			errs = append(errs, field.Invalid(at.Child("macAddr"), d.MACAddr, problem))
			continue
		}
		if j, ok := macs[mac]; ok {
			errs = append(errs, duplicate(at.Child("macAddr"), d.MACAddr,
				fmt.Sprintf("same as %s: two NICs with one MAC break ARP on the network", path.Index(j).Child("macAddr"))))
			continue
		}
		macs[mac] = i
	}
	return errs
}

// validatePools checks the IPAM pool references: an IPAddressClaim needs the pool's group, kind
// and name (the schema lets each be empty, and a missing apiGroup means the core group).
func validatePools(d infrav1.NetworkDevice, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	at := path.Child("addressesFromPools")
	if len(d.AddressesFromPools) > 0 && d.DHCP4 {
		errs = append(errs, field.Forbidden(at, "cannot be combined with dhcp4: the claimed address would be set next to the DHCP lease"))
	}
	for j, ref := range d.AddressesFromPools {
		if ref.APIGroup == nil || *ref.APIGroup == "" {
			errs = append(errs, field.Required(at.Index(j).Child("apiGroup"), "the pool's API group, e.g. ipam.cluster.x-k8s.io"))
		}
		if ref.Kind == "" {
			errs = append(errs, field.Required(at.Index(j).Child("kind"), "the pool's kind, e.g. InClusterIPPool"))
		}
		if ref.Name == "" {
			errs = append(errs, field.Required(at.Index(j).Child("name"), "the pool's name"))
		}
	}
	return errs
}

// parseUnicastMAC returns the normalized MAC, or why s is not an Ethernet unicast MAC. The schema
// checks the notation; a NIC cannot take a multicast (or broadcast) address.
func parseUnicastMAC(s string) (string, string) {
	hw, err := net.ParseMAC(s)
	switch {
	case err != nil || len(hw) != 6:
		return "", "must be a 6-byte MAC address, e.g. 00:50:56:aa:bb:cc"
	case hw[0]&1 != 0:
		return "", "must be a unicast MAC address (the low bit of the first byte is 0)"
	}
	return hw.String(), ""
}

// duplicate is a Duplicate error with an explanation.
func duplicate(path *field.Path, value any, detail string) *field.Error {
	err := field.Duplicate(path, value)
	err.Detail = detail
	return err
}
