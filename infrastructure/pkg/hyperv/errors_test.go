package hyperv

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/logingate"
)

// TestHostErrorWords: every error kind reads as a sentence with the action, the host, what went
// wrong, the host's own message and what to do, and ends with the kind's name; the kind, the
// login gate's outcome and the VMProvisioned reason are those of the bare error.
func TestHostErrorWords(t *testing.T) {
	for _, tc := range []struct {
		kind, action, message string
		words                 []string
		outcome               logingate.Outcome
	}{
		{wire.KindNotFound, "power on VM 6f1c", "VM 6f1c does not exist", []string{"does not exist on the host", "removed outside capwin"}, logingate.Accepted},
		{wire.KindInvalidSpec, "create VM win-md-0-x", "parent disk D:\\w2022.vhdx does not exist on host hv1", []string{"cannot do what the spec asks", "parent disk, virtual switch"}, logingate.Accepted},
		{wire.KindDiskFull, "create VM win-md-0-x", "There is not enough space on the disk.", []string{"disk is full", "free space in the cluster's vmPath and diskPath"}, logingate.Accepted},
		{wire.KindAccessDenied, "delete VM 6f1c", "Access is denied.", []string{"WinRM user may not do this", "Hyper-V Administrator"}, logingate.Accepted},
		{wire.KindGuestUnavailable, "shut down the guest of VM 6f1c", "the guest shutdown service is not running", []string{"does not answer through its integration services", "trySoft"}, logingate.Accepted},
		{wire.KindGuestFailed, "start the bootstrap script in VM 6f1c", "PowerShell Direct as Administrator: The credential is invalid.", []string{"PowerShell Direct into the guest failed", "spec.guestCredentialsRef"}, logingate.Accepted},
		{wire.KindFailed, "eject the config drive of VM 6f1c", "RequestStateChange returned 32775", []string{"the operation failed", "tries again"}, logingate.Accepted},
		{wire.KindUnreachable, "find VM 6f1c", "no answer within 30s (the operation); the host may be hung or overloaded", []string{"did not answer", "WinRM HTTPS listener"}, logingate.Unreachable},
		{wire.KindAuth, "check the VM and disk folders and virtual switches", `user "capwin", HTTP 401`, []string{"refused the credentials", "fix the username and password in the host's credentials Secret"}, logingate.Refused},
		{wire.KindTLS, "read job 12", "x509: certificate signed by unknown authority", []string{"certificate is not trusted", "caBundle"}, logingate.Untried},
		{wire.KindCredentials, "", `login Secret ns/hosts: secrets "hosts" not found`, []string{"credentials are missing", "keys username and password"}, logingate.Untried},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			err := &HostError{Kind: tc.kind, Host: "hv1", Op: "op", Action: tc.action, Message: tc.message}
			msg := err.Error()
			want := append([]string{"Hyper-V host hv1", tc.message, "(Hyper-V error " + tc.kind + ")"}, tc.words...)
			if tc.action != "" {
				want = append(want, tc.action+" on Hyper-V host hv1: ")
			}
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			// The backend adds no action to an error that names its own.
			wrapped := fmt.Errorf("reconcile: %w", doing("power on VM 6f1c", err))
			if got := KindOf(wrapped); got != tc.kind {
				t.Errorf("KindOf = %q", got)
			}
			if strings.Count(wrapped.Error(), "power on VM 6f1c") > strings.Count(msg, "power on VM 6f1c") {
				t.Errorf("action added twice: %q", wrapped)
			}
			if got := err.LoginOutcome(); got != tc.outcome {
				t.Errorf("LoginOutcome = %v, want %v", got, tc.outcome)
			}
			if got := hypervisor.Reason(wrapped); got != infrav1.HypervisorErrorReason {
				t.Errorf("Reason = %q", got)
			}
			if got := outcome(wrapped); got != tc.kind {
				t.Errorf("metric outcome = %q", got)
			}
		})
	}
}

// TestDoing: an error that does not name its action gets it in front, once; errors.As still
// finds what it wraps.
func TestDoing(t *testing.T) {
	base := hypervisor.Errorf(infrav1.InvalidSpecReason, "host %q is not one of the HyperVCluster's hosts", "hv9")
	err := doing("delete VM 6f1c", base)
	if err.Error() != `delete VM 6f1c: host "hv9" is not one of the HyperVCluster's hosts` {
		t.Errorf("got %q", err)
	}
	if e, ok := hypervisor.AsError(err); !ok || e.Reason != infrav1.InvalidSpecReason || hypervisor.Reason(err) != infrav1.InvalidSpecReason {
		t.Errorf("terminal error lost in %v", err)
	}
	if doing("x", nil) != nil {
		t.Error("nil is no error")
	}
	if !errors.Is(doing("x", base), base) {
		t.Error("not wrapped")
	}
}

// TestActions: each operation names what it does to which VM.
func TestActions(t *testing.T) {
	for _, tc := range []struct {
		op   wire.Script
		in   any
		want string
	}{
		{wire.OpCreate, wire.CreateInput{Name: "win-md-0-x"}, "create VM win-md-0-x"},
		{wire.OpFind, wire.VMKey{UID: "u1"}, "find VM of UID u1"},
		{wire.OpFind, wire.VMKey{ID: "6f1c", UID: "u1"}, "find VM 6f1c"},
		{wire.OpPower, wire.PowerInput{ID: "6f1c", Action: wire.PowerStart}, "power on VM 6f1c"},
		{wire.OpPower, wire.PowerInput{ID: "6f1c", Action: wire.PowerShutdown}, "shut down the guest of VM 6f1c"},
		{wire.OpRemove, wire.VMKey{ID: "6f1c"}, "delete VM 6f1c"},
		{wire.OpEject, wire.VMKey{ID: "6f1c"}, "eject the config drive of VM 6f1c"},
		{wire.OpGuest, wire.GuestInput{ID: "6f1c"}, "start the bootstrap script in VM 6f1c"},
		{wire.OpJob, wire.JobRef{Job: "12"}, "read job 12"},
		{wire.OpHost, wire.Placement{}, "check the VM and disk folders and virtual switches"},
	} {
		if got := action(tc.op, tc.in); got != tc.want {
			t.Errorf("action(%s) = %q, want %q", tc.op.Name, got, tc.want)
		}
	}
}
