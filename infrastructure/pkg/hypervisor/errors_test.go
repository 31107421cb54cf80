package hypervisor

import (
	"errors"
	"fmt"
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// The reconciler tells the errors apart through wrapping: a backend may add where it failed.
func TestErrorsSurviveWrapping(t *testing.T) {
	notOwned := fmt.Errorf("find VM of ns/m: %w", NotOwned("VM %s has another owner mark", "vm-1"))
	if !IsNotOwned(notOwned) {
		t.Fatalf("IsNotOwned(%v) = false", notOwned)
	}
	if e, ok := AsError(notOwned); !ok || e.Reason != infrav1.VMNotOwnedReason || e.Error() != "VM vm-1 has another owner mark" {
		t.Fatalf("AsError(%v) = %+v, %v", notOwned, e, ok)
	}
	invalid := fmt.Errorf("clone: %w", Errorf(infrav1.InvalidSpecReason, "disk too small"))
	if IsNotOwned(invalid) {
		t.Fatalf("IsNotOwned(%v) = true", invalid)
	}
	if _, ok := AsError(errors.New("connection reset")); ok {
		t.Fatal("a plain error is not terminal")
	}
	pending := fmt.Errorf("create: %w", &CreatePending{Err: errors.New("no answer")})
	var p *CreatePending
	if !errors.As(pending, &p) || !errors.Is(pending, p.Err) {
		t.Fatalf("CreatePending lost in %v", pending)
	}
}

// TestReason: the VMProvisioned reason of a backend error does not depend on the actions
// wrapped around it.
func TestReason(t *testing.T) {
	for err, want := range map[error]string{
		errors.New("connection reset"): infrav1.HypervisorErrorReason,
		fmt.Errorf("clone VM m: %w", Errorf(infrav1.BootstrapDataTooLargeReason, "too large")):  infrav1.BootstrapDataTooLargeReason,
		fmt.Errorf("power on VM m: %w", &Throttled{Message: "20 tasks run"}):                    infrav1.WaitingForTaskSlotReason,
		fmt.Errorf("find VM m: %w", NotOwned("VM %s has another owner mark", "vm-1")):           infrav1.VMNotOwnedReason,
		fmt.Errorf("clone VM m: %w", &CreatePending{Err: errors.New("no answer from vCenter")}): infrav1.HypervisorErrorReason,
	} {
		if got := Reason(err); got != want {
			t.Errorf("Reason(%v) = %q, want %q", err, got, want)
		}
	}
}
