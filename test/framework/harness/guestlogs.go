package harness

import (
	"fmt"

	"github.com/capwin/capwin/test/framework/hypervsim"
)

// answerCollectors lets the simulated guests run the log collectors capwin starts in them: on
// Hyper-V PowerShell Direct runs one to its end; on vSphere a program VMware Tools started runs
// beside and leaves its zip in the guest, where the manager copies it from once Tools lists it
// as ended. (The bootstrap launcher is not simulated in the harness: its guests have
// cloudbase-init.)
func (h *Harness) answerCollectors() {
	for _, host := range h.HyperV {
		host.OnGuestLogs = func(_ *hypervsim.Host, id string, script []byte) ([]byte, error) {
			return h.collect("hyperv/"+id, script)
		}
	}
	if h.VSphere != nil {
		h.VSphere.GuestOps.RunCollectors(func(vm string, script []byte) ([]byte, error) {
			return h.collect(h.Guests.keyOfRef(vm), script)
		}, nil)
	}
}

func (h *Harness) collect(key string, script []byte) ([]byte, error) {
	g := h.Guests.byKey(key)
	if g == nil {
		return nil, fmt.Errorf("no guest runs in VM %s", key)
	}
	return g.Collect(script)
}
