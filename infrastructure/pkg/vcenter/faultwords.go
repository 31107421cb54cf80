package vcenter

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// faultWords says what a vSphere fault means for the call on its subject and what the operator can
// do, naming the object. Each group below knows a family of faults, most specific type first.
func faultWords(on subject, f types.BaseMethodFault) string {
	for _, words := range []func(subject, types.BaseMethodFault) string{
		nameWords, fileWords, accessWords, resourceWords, stateWords, configWords, connectionWords,
	} {
		if w := words(on, f); w != "" {
			return w
		}
	}
	return "vSphere could not do it; capwin tries again (vCenter's message says why)"
}

// nameWords: the VM's name is taken or not allowed.
func nameWords(on subject, f types.BaseMethodFault) string {
	switch f := f.(type) {
	case *types.DuplicateName:
		return fmt.Sprintf("a %s named %s, not created by capwin for this machine, already exists in %s: rename or remove it",
			kindOf(f.Object), cmp.Or(f.Name, on.vm), on.where())
	case *types.VmAlreadyExistsInDatacenter:
		return fmt.Sprintf("the files of %s are registered already as another VM of the datacenter (on host %s): unregister or remove that VM",
			on.vmName(), f.Hostname)
	case *types.AlreadyExists:
		return fmt.Sprintf("%s already exists: rename or remove it", cmp.Or(f.Name, "the object"))
	case *types.InvalidName:
		return fmt.Sprintf("vSphere does not accept the name %q: VM names have at most 80 characters and no / \\ or %%; rename the machine (its VM takes its name)", f.Name)
	}
	return ""
}

// fileWords: the datastore files of the VM or its template.
func fileWords(on subject, f types.BaseMethodFault) string {
	ds := cmp.Or(on.datastore, "the template's datastore")
	switch f := f.(type) {
	case *types.FileAlreadyExists:
		return fmt.Sprintf("file %s of %s already exists on %s (left behind by a VM removed from the inventory without its files): delete it from the datastore",
			f.File, on.vmName(), ds)
	case *types.NoDiskSpace:
		return fmt.Sprintf("datastore %s has no free space left for %s: free space on it, or choose another datastore in spec.placement.datastore", cmp.Or(f.Datastore, ds), f.File)
	case *types.CannotCreateFile:
		return fmt.Sprintf("vSphere could not create file %s on %s: check that the datastore is writable from the host and has free space", f.File, ds)
	case *types.FileNotFound:
		return fmt.Sprintf("file %s is missing from its datastore (moved or deleted outside vSphere): repair or replace %s", f.File, cmp.Or(on.template, "the VM"))
	case *types.FileLocked:
		return fmt.Sprintf("file %s is locked by another VM or host: power off or remove the VM that holds it", f.File)
	case types.BaseFileFault:
		return fmt.Sprintf("file %s cannot be used: check the datastore from the vSphere client", f.GetFileFault().File)
	}
	return ""
}

// accessWords: logins, sessions and privileges.
func accessWords(on subject, f types.BaseMethodFault) string {
	switch f := f.(type) {
	case *types.NotAuthenticated:
		return "the vCenter session ended (vCenter restarted, or the session timed out or was closed): capwin logs in again and retries"
	case types.BaseNoPermission:
		return "the vCenter user lacks " + privileges(f.GetNoPermission()) +
			": grant it in the user's role (docs/vcenter/install.md, vCenter permissions, lists the privileges capwin needs)"
	case types.BaseInvalidLogin:
		return "vCenter refused the user name or password: fix them in the identity Secret"
	case *types.InvalidGuestLogin:
		return fmt.Sprintf("the guest of %s refused the user name or password of spec.guestCredentialsRef: fix the Secret", on.vmName())
	case *types.GuestOperationsUnavailable:
		return fmt.Sprintf("VMware Tools in %s do not accept guest operations yet: capwin retries once the guest has booted", on.vmName())
	}
	return ""
}

// privileges names the missing privileges and their objects.
func privileges(f *types.NoPermission) string {
	var out []string
	for _, m := range f.MissingPrivileges {
		out = append(out, fmt.Sprintf("%s on %s", strings.Join(m.PrivilegeIds, ", "), refName(&m.Entity)))
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("%s on %s", cmp.Or(f.PrivilegeId, "a privilege"), cmp.Or(refName(f.Object), "the object")))
	}
	return "privilege " + strings.Join(out, "; ")
}

// resourceWords: memory, CPU, storage and licenses.
func resourceWords(on subject, f types.BaseMethodFault) string {
	pool := "the default resource pool"
	if on.pool != "" {
		pool = "resource pool " + on.pool
	}
	switch f := f.(type) {
	case *types.InsufficientMemoryResourcesFault:
		return fmt.Sprintf("%s has %d MiB of memory unreserved, %s asks %d MiB: lower spec.memoryMiB, free memory or raise the pool's limit",
			pool, f.Unreserved>>20, on.vmName(), f.Requested>>20)
	case *types.InsufficientCpuResourcesFault:
		return fmt.Sprintf("%s has %d MHz of CPU unreserved, %s asks %d MHz: lower spec.numCPUs or raise the pool's limit",
			pool, f.Unreserved, on.vmName(), f.Requested)
	case types.BaseInsufficientHostCapacityFault:
		if host := refName(f.GetInsufficientHostCapacityFault().Host); host != "" {
			return fmt.Sprintf("%s has not enough capacity for %s: lower its size, or free or add hosts", host, on.vmName())
		}
		return fmt.Sprintf("no host of the cluster has enough capacity for %s: lower its size, or free or add hosts", on.vmName())
	case *types.InsufficientStorageSpace:
		return fmt.Sprintf("%s has not enough space for %s: free space, or choose another datastore in spec.placement.datastore",
			cmp.Or(on.datastore, "the datastore"), on.vmName())
	case *types.InsufficientFailoverResourcesFault:
		return fmt.Sprintf("HA admission control keeps failover capacity free, so %s may not start: lower its size, or add hosts", on.vmName())
	case types.BaseInsufficientResourcesFault:
		return fmt.Sprintf("%s lacks the resources (memory, CPU or slots) for %s: lower its size, or free resources", pool, on.vmName())
	case types.BaseNotEnoughLicenses:
		return "vSphere has not enough licenses (or one expired) for it: add or renew licenses in vCenter"
	case *types.OutOfBounds:
		return fmt.Sprintf("%s is out of the bounds vSphere allows: lower it in the machine's spec (numCPUs, memoryMiB, diskGiB)", cmp.Or(f.ArgumentName, "a value"))
	}
	return ""
}

// kindOf names the kind of a managed object.
func kindOf(r types.ManagedObjectReference) string {
	switch r.Type {
	case "VirtualMachine", "":
		return "VM"
	case "Folder":
		return "folder"
	case "ResourcePool":
		return "resource pool"
	}
	return r.Type
}
