package hypervsim

import (
	"context"
	"strings"
	"testing"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// TestVTPMThroughWinRM: create with vtpm gives the VM a local key protector and its TPM, and the
// view reports the TPM and Secure Boot. A run an interruption stopped after Set-VMKeyProtector
// keeps that protector; a complete VM is left as it is.
func TestVTPMThroughWinRM(t *testing.T) {
	h, _, conn := simHost(t, false)
	ctx := context.Background()
	in := createInput("u4", []byte("iso"))
	in.VTPM = true
	var v wire.View
	if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
		t.Fatal(err)
	}
	if vm := h.VMs()[0]; !v.TPM || !v.SecureBoot || !vm.TPM || vm.KeyProtectors != 1 {
		t.Fatalf("view TPM %v, Secure Boot %v; VM TPM %v with %d key protectors; want on, on, on, 1", v.TPM, v.SecureBoot, vm.TPM, vm.KeyProtectors)
	}
	_ = h.Guest(v.ID, func(vm *VM) {
		vm.Notes, vm.TPM = strings.TrimSuffix(vm.Notes, "\ncapwin-complete:u4"), false
	})
	for range 2 {
		if err := conn.Run(ctx, wire.OpCreate, in, &v); err != nil {
			t.Fatal(err)
		}
	}
	if vm := h.VMs()[0]; !v.TPM || !vm.TPM || vm.KeyProtectors != 1 {
		t.Fatalf("after the interrupted run: view TPM %v, VM TPM %v with %d key protectors; want on, 1", v.TPM, vm.TPM, vm.KeyProtectors)
	}
}
