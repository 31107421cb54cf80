package harness

import (
	"fmt"
	"strings"

	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/vcsim"
)

// answerCollectors lets the simulated guests run the log collectors capwin starts in them: on
// Hyper-V PowerShell Direct runs one to its end; on vSphere a program VMware Tools started runs
// beside and leaves its zip in the guest, where the manager copies it from once Tools lists it
// as ended.
func (h *Harness) answerCollectors() {
	for _, host := range h.HyperV {
		host.OnGuestLogs = func(_ *hypervsim.Host, id string, script []byte) ([]byte, error) {
			g := h.Guests.byKey("hyperv/" + id)
			if g == nil {
				return nil, fmt.Errorf("no guest runs in VM %s", id)
			}
			return g.Collect(script)
		}
	}
	if h.VSphere != nil {
		h.VSphere.GuestOps.OnStart = h.vsphereProgram
	}
}

// vsphereProgram runs a log collector started through VMware Tools in the VM's guest.
func (h *Harness) vsphereProgram(vm string, p vcsim.Process) {
	_, rest, ok := strings.Cut(p.Arguments, `-File "`)
	path, _, _ := strings.Cut(rest, `"`)
	if !ok || !strings.Contains(strings.ToLower(path), `\collect-`) {
		return // the bootstrap launcher is not simulated in the harness (its guests have cloudbase-init)
	}
	ops := h.VSphere.GuestOps
	go func() {
		code := int32(1)
		script := ops.Guest(vm).Files[path]
		if g := h.Guests.byKey(h.Guests.keyOfRef(vm)); g != nil {
			zip, err := g.Collect(script)
			doc, derr := guestmeta.ParseCollect(script)
			if err == nil && derr == nil {
				ops.PutFile(vm, doc.Output, zip)
				code = 0
			}
		}
		ops.Exit(vm, p.Pid, code)
	}()
}
