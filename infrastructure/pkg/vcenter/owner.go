package vcenter

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

// ownerMark is the value of keyOwner for an object.
func ownerMark(obj client.Object) string {
	return obj.GetNamespace() + "/" + obj.GetName() + "/" + string(obj.GetUID())
}

// owned returns vm when it is the object's: its instance UUID is the object's UID (capwin cloned
// it for this very object), or its owner mark names the object's namespace and name (the object
// was re-created by clusterctl move with a new UID). Any other VM was found through a value the
// user can write (status, spec.providerID) and is refused.
func owned(s *hypervisor.Scope, vm *hypervisor.VM, mark, via string) (*hypervisor.VM, error) {
	obj := s.InfraMachine
	if strings.EqualFold(vm.Ref.InstanceUUID, string(obj.GetUID())) {
		return vm, nil
	}
	if ns, name, ok := parseOwnerMark(mark); ok && ns == obj.GetNamespace() && name == obj.GetName() {
		return vm, nil
	}
	why := "it has no " + keyOwner + " mark (capwin did not create it)"
	if mark != "" {
		why = fmt.Sprintf("its %s mark is %q, not this object's", keyOwner, mark)
	}
	return nil, hypervisor.NotOwned("VM %s (instance UUID %s), found by %s, is not this machine's: %s; capwin leaves it alone",
		vm.Ref.ID, vm.Ref.InstanceUUID, via, why)
}

// parseOwnerMark returns the namespace and name of an owner mark (its UID is for people: a moved
// object has a new one).
func parseOwnerMark(mark string) (ns, name string, ok bool) {
	parts := strings.Split(mark, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}
