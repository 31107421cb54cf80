package vcsim

import (
	"strings"

	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
)

// Collector runs capwin's log collector (a rendered collect.ps1) in the guest of a VM (by
// reference value) and returns the zip it leaves.
type Collector func(vm string, script []byte) ([]byte, error)

// RunCollectors makes the log collectors capwin starts through VMware Tools run in the guests: a
// program started with a collector script (guestmeta.CollectArgs of a collect-<id>.ps1) runs
// beside, leaves its zip at its document's output and ends with 0, where the manager copies the
// zip from once Tools lists the program as ended; it ends with 1 when collect fails. Other
// programs (the bootstrap launcher) are left to onOther (nil: they run forever).
func (g *GuestOps) RunCollectors(collect Collector, onOther func(vm string, p Process)) {
	g.OnStart = func(vm string, p Process) {
		_, rest, ok := strings.Cut(p.Arguments, `-File "`)
		path, _, _ := strings.Cut(rest, `"`)
		if !ok || !strings.Contains(strings.ToLower(path), `\collect-`) {
			if onOther != nil {
				onOther(vm, p)
			}
			return
		}
		go func() {
			code := int32(1)
			script := g.Guest(vm).Files[path]
			zip, err := collect(vm, script)
			doc, derr := guestmeta.ParseCollect(script)
			if err == nil && derr == nil {
				g.PutFile(vm, doc.Output, zip)
				code = 0
			}
			g.Exit(vm, p.Pid, code)
		}()
	}
}
