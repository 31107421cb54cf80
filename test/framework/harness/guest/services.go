package guest

import (
	"fmt"
	"strings"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// The services of the image that run from its start, by name, with their program: an image with
// containerd starts its service at boot. Windows cannot replace the program of a running service
// ("being used by another process"), which is what the downloads step must get right.
func imageServices() map[string]string {
	return map[string]string{"containerd": `C:\Program Files\containerd\containerd.exe`}
}

// install writes a download where the script puts it (an archive is unpacked into its folder),
// after stopping the service the document names, as the script does, and fails as Windows would
// when a running service's program is replaced.
func (s *script) install(d userdata.DocDownload) error {
	content := []byte("simulated download of " + d.URL + "\n")
	if d.Service != "" && s.running[d.Service] != "" {
		s.log("stopping service " + d.Service + " to replace its files")
		delete(s.running, d.Service)
	}
	s.g.fs.write(d.Path, content)
	if d.Extract == "" {
		return nil // a program the step moves into place: Move-Item over a stopped service's file
	}
	// A containerd release archive: its bin folder's programs land in the folder.
	programs := []string{d.Extract + `\containerd.exe`, d.Extract + `\ctr.exe`, d.Extract + `\containerd-shim-runhcs-v1.exe`}
	if f := s.g.cfg.Faults.RestartDuring; !s.cut && strings.EqualFold(f, s.step) {
		s.cut = true
		return &powerCut{step: s.step}
	}
	for _, p := range programs {
		for name, program := range s.running {
			if strings.EqualFold(program, p) {
				return fmt.Errorf("unpacking %s: the process cannot access the file '%s' because it is being used by another process (service %s)", d.Path, p, name)
			}
		}
		s.g.fs.write(p, content)
	}
	return nil
}

// powerCut is the guest losing power in the middle of a step: nothing is reported, and the
// script starts again at boot.
type powerCut struct{ step string }

func (c *powerCut) Error() string { return "power lost during step " + c.step }
