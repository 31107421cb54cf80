package hypervsim

import (
	"github.com/capwin/capwin/test/hypervsim/wsman"
)

// Serve starts the host's WinRM HTTPS endpoint; users maps user names to passwords. NTLM is
// strict, as on Windows: an answer counts only on the connection that got the challenge.
func (h *Host) Serve(users map[string]string) (*wsman.Server, error) {
	return h.ServeWith(wsman.Options{Users: users})
}

// ServeWith is Serve with the endpoint's other options (listen address, certificate); the host
// is the handler, and NTLM is strict.
func (h *Host) ServeWith(opts wsman.Options) (*wsman.Server, error) {
	opts.Handler, opts.StrictNTLM = h, true
	return wsman.Start(opts)
}
