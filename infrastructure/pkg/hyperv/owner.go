package hyperv

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// Lines of a VM's notes that create.ps1 writes: the uid and owner lines right after New-VM, the
// complete line last, once every setting of the VM is in place and checked.
const (
	noteUID      = "capwin-uid:"
	noteOwner    = "capwin-owner:"
	noteComplete = "capwin-complete:"
	noteGuestRun = "capwin-guest-run:"
)

// mark is what a VM's notes say about whose VM it is and whether its create finished.
type mark struct {
	uid, owner string
	complete   bool
}

func readMark(notes string) mark {
	m := mark{uid: noteValue(notes, noteUID), owner: noteValue(notes, noteOwner)}
	// capwin versions before the owner and complete lines wrote only the uid line.
	m.complete = m.uid != "" && (noteValue(notes, noteComplete) == m.uid || m.owner == "")
	return m
}

// claim reads a VM's mark and says why the VM is not the object's ("" when it is). It is when
// its uid line names one of the object's UIDs (its own, or the one recorded from this VM), or its
// owner line the object's namespace/name (clusterctl move gives the object a new UID). A VM
// without a uid line is an interrupted create of the object's when its disk is named after the
// object's UID (notes are set right after New-VM, the disk is made before).
func claim(v *wire.View, uids []string, owner string) (mark, string) {
	m := readMark(v.Notes)
	for _, uid := range uids {
		if uid == "" {
			continue
		}
		if m.uid == uid || (m.uid == "" && hasDisk(v, uid)) {
			return m, ""
		}
	}
	if m.owner != "" && m.owner == owner {
		return m, ""
	}
	if m.uid == "" {
		return m, "its notes carry no capwin mark, so capwin did not create it"
	}
	if m.owner != "" {
		return m, fmt.Sprintf("its notes mark it as the VM of %s (UID %s)", m.owner, m.uid)
	}
	return m, fmt.Sprintf("its notes mark it as the VM of the object with UID %s", m.uid)
}

// ownerOf is the owner line's value for an object: it survives clusterctl move, its UID does not.
func ownerOf(obj client.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

// hasDisk reports whether one of the VM's disks is the differencing disk capwin names after uid.
func hasDisk(v *wire.View, uid string) bool {
	for _, d := range v.Disks {
		if strings.EqualFold(fileName(d.Path), uid+".vhdx") {
			return true
		}
	}
	return false
}

// noteValue returns the value of the first "prefix..." line of a VM's notes: a whole line that
// starts with the prefix (a line break of \r\n counts as \n), never text within a line.
func noteValue(notes, prefix string) string {
	for _, line := range strings.Split(notes, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), prefix); ok {
			return v
		}
	}
	return ""
}
