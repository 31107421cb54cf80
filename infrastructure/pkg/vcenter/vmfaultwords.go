package vcenter

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// stateWords: the VM, a host or another task is in the way.
func stateWords(on subject, f types.BaseMethodFault) string {
	switch f := f.(type) {
	case *types.InvalidPowerState:
		return fmt.Sprintf("%s is %s, and this needs it %s: capwin looks at the VM again and goes on from its state",
			on.vmName(), powerWord(f.ExistingState), cmp.Or(powerWord(f.RequestedState), "in another power state"))
	case *types.QuestionPending:
		return fmt.Sprintf("%s waits for an answer to a question (%q): answer it in the vSphere client", on.vmName(), f.Text)
	case *types.InvalidHostState:
		return fmt.Sprintf("%s is in a state that does not allow it (maintenance mode, or disconnected): take it out of that state or move the VM",
			cmp.Or(refName(f.Host), "the host"))
	case types.BaseInvalidState:
		return fmt.Sprintf("%s is in a state that does not allow it (being migrated, snapshotted or changed): capwin retries once it settles", on.vmName())
	case types.BaseTaskInProgress:
		return fmt.Sprintf("task %s still runs on %s: capwin retries when it ends", f.GetTaskInProgress().Task.Value, on.vmName())
	case *types.ConcurrentAccess:
		return fmt.Sprintf("%s was changed by someone else at the same time: capwin retries", on.vmName())
	case *types.ManagedObjectNotFound:
		return fmt.Sprintf("%s no longer exists in vCenter (deleted or moved meanwhile): capwin looks it up again", cmp.Or(refName(&f.Obj), "the object"))
	case *types.RequestCanceled:
		return "the task was canceled in vCenter (by a user or an administrator): capwin tries again"
	}
	return ""
}

// powerWord names a power state in words.
func powerWord(s types.VirtualMachinePowerState) string {
	switch s {
	case types.VirtualMachinePowerStatePoweredOn:
		return "powered on"
	case types.VirtualMachinePowerStatePoweredOff:
		return "powered off"
	}
	return string(s)
}

// configWords: the VM's configuration, its devices and its placement.
func configWords(on subject, f types.BaseMethodFault) string {
	switch f := f.(type) {
	case *types.DatastoreNotWritableOnHost:
		return fmt.Sprintf("datastore %s cannot be written from %s: choose a datastore every host of the cluster mounts read-write",
			cmp.Or(f.Name, on.datastore), refName(&f.Host))
	case *types.InvalidDatastorePath:
		return fmt.Sprintf("datastore path %q is not valid: check the template's files and spec.placement.datastore", f.DatastorePath)
	case types.BaseInvalidDatastore:
		d := f.GetInvalidDatastore()
		return fmt.Sprintf("datastore %s cannot be used for %s: check spec.placement.datastore and that the cluster's hosts mount it",
			cmp.Or(d.Name, cmp.Or(refName(d.Datastore), on.datastore)), on.vmName())
	case *types.CannotAccessNetwork:
		return fmt.Sprintf("a network of %s cannot be reached from its host: check that the networks of spec.network exist on every host of the cluster", on.vmName())
	case types.BaseInvalidDeviceSpec:
		return fmt.Sprintf("device %d of the configuration of %s is not valid (a network missing on the host, a data disk its controller has no room for, or a device its hardware version lacks): check spec.network, spec.dataDisks and the template",
			f.GetInvalidDeviceSpec().DeviceIndex, on.vmName())
	case types.BaseInvalidArgument:
		return fmt.Sprintf("vSphere refused the value of %s: check the machine's spec and placement", cmp.Or(f.GetInvalidArgument().InvalidProperty, "an argument"))
	case types.BaseVirtualHardwareCompatibilityIssue:
		return fmt.Sprintf("the host cannot run the hardware of %s (CPU count, memory size, a device or the hardware version): lower the spec or upgrade the hosts", on.vmName())
	case types.BaseInvalidVmConfig:
		return fmt.Sprintf("the configuration of %s is not valid (%s): check the machine's spec and the template", on.vmName(), cmp.Or(f.GetInvalidVmConfig().Property, "see vCenter's message"))
	case types.BaseVmConfigFault:
		return fmt.Sprintf("vSphere refused the configuration of %s: check the machine's spec and the template", on.vmName())
	case *types.NoCompatibleHost:
		if on.pci {
			return fmt.Sprintf("no host of the cluster can run %s with its PCI devices (spec.pciDevices): it needs a host with such a device free (a DirectPath I/O device of that vendor and device id, or an NVIDIA vGPU manager offering the profile) and room for its full memory reservation (docs/gpus.md, vCenter)", on.vmName())
		}
		return fmt.Sprintf("no host of the cluster can run %s: check that its networks, datastore and hardware version are available on the hosts", on.vmName())
	case types.BaseInvalidFolder:
		return fmt.Sprintf("%s cannot hold VMs: set spec.placement.folder to a VM folder", on.where())
	case *types.NotSupported:
		return "this vCenter or host does not support it (a linked clone without a snapshot, or an old host version): check the spec"
	}
	return ""
}

// connectionWords: vCenter and its hosts.
func connectionWords(on subject, f types.BaseMethodFault) string {
	switch f := f.(type) {
	case types.BaseHostCommunication:
		return fmt.Sprintf("the ESXi host of %s does not answer vCenter (disconnected or not responding): reconnect the host; capwin retries", on.vmName())
	case types.BaseTimedout:
		return "vCenter timed out (an overloaded host or datastore): capwin retries"
	case *types.SystemError:
		return fmt.Sprintf("vCenter had an internal error (%s): capwin retries; see vCenter's logs if it stays", cmp.Or(f.Reason, "no reason given"))
	}
	return ""
}

// keyProviderWords: vSphere encrypts the files of a VM with a vTPM and refuses to create one when
// vCenter has no usable key provider. govmomi has no fault type named for that case (which type
// vCenter sends is not known here; its message names the key provider or the encryption), so the
// words go by the message, and only for a machine with a vTPM.
func keyProviderWords(on subject, detail string) string {
	d := strings.ToLower(detail)
	if !on.vtpm || !(strings.Contains(d, "key provider") || strings.Contains(d, "encrypt") || strings.Contains(d, "kms")) {
		return ""
	}
	return fmt.Sprintf("%s has a vTPM (spec.vTPM), which vSphere encrypts with a key provider, and vCenter has no usable one: add a Native or Standard key provider, make it the default and give capwin's user the Cryptographer privileges (docs/vcenter/templates.md, Firmware, Secure Boot and vTPM), or remove spec.vTPM",
		on.vmName())
}
