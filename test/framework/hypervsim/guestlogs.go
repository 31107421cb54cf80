package hypervsim

import (
	"encoding/base64"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// guestLogs mirrors guestlogs.ps1: PowerShell Direct into a running VM with the guest's
// credentials, the collector run to its end by the guest (OnGuestLogs), its zip returned unless
// it is larger than the input allows.
func (h *Host) guestLogs(in wire.GuestLogsInput) (any, error) {
	h.mu.Lock()
	_, err := h.powerShellDirect(in.ID, in.Username, in.Password)
	cb := h.OnGuestLogs
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	script, err := base64.StdEncoding.DecodeString(in.Script)
	if err != nil {
		return nil, fail(wire.KindGuestFailed, "collector script: %v", err)
	}
	if cb == nil {
		return nil, fail(wire.KindGuestFailed, "the log collector ended with exit code 1")
	}
	zip, err := cb(h, in.ID, script)
	if err != nil {
		return nil, fail(wire.KindGuestFailed, "the log collector ended with exit code 1 (%v)", err)
	}
	if int64(len(zip)) > in.MaxBytes {
		return nil, fail(wire.KindGuestFailed, "the guest's archive has %d bytes, more than the %d a log archive may", len(zip), in.MaxBytes)
	}
	return wire.GuestLogs{Data: base64.StdEncoding.EncodeToString(zip)}, nil
}
