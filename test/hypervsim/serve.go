package hypervsim

import (
	"github.com/capwin/capwin/test/hypervsim/wsman"
)

// Serve starts the host's WinRM HTTPS endpoint; users maps user names to passwords. NTLM is
// strict, as on Windows: an answer counts only on the connection that got the challenge.
func (h *Host) Serve(users map[string]string) (*wsman.Server, error) {
	return wsman.Start(wsman.Options{Users: users, Handler: h, StrictNTLM: true})
}
