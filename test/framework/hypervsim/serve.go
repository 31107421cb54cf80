package hypervsim

import (
	"github.com/capwin/capwin/test/framework/hypervsim/wsman"
)

// Serve starts the host's WinRM HTTPS endpoint; users maps user names to passwords. NTLM is
// strict, as on Windows: an answer counts only on the connection that got the challenge.
func (h *Host) Serve(users map[string]string) (*wsman.Server, error) {
	return h.ServeWith(wsman.Options{Users: users})
}

// ServeWith is Serve with the endpoint's other options (listen address, certificate); the host
// is the handler, and NTLM is strict. A command runs once its stdin ended, as capwin's runner
// reads the operation from its stdin to the end: a Send held up on a busy machine is waited for,
// never taken for "no input".
func (h *Host) ServeWith(opts wsman.Options) (*wsman.Server, error) {
	opts.Handler, opts.StrictNTLM, opts.AwaitStdin = h, true, true
	return wsman.Start(opts)
}
