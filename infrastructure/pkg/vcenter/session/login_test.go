package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// TestRefusedLogin: a refused login names the server and the user, says what to fix, ends with
// the fault's name and keeps the fault.
func TestRefusedLogin(t *testing.T) {
	err := classifyLogin(loginAction("vc:443", "capwin"), soap.WrapVimFault(&types.InvalidLogin{}))
	var login *LoginError
	if !errors.As(err, &login) || login.Reason != infrav1.AuthenticationFailedReason {
		t.Fatalf("got %#v, want a LoginError with reason %s", err, infrav1.AuthenticationFailedReason)
	}
	want := "log in to vCenter vc:443 as capwin: vCenter refused the user name or password: fix them in the identity Secret (vSphere fault InvalidLogin)"
	if !strings.HasPrefix(login.Error(), want) {
		t.Errorf("login error %q, want %q", login, want)
	}
	if !fault.Is(err, &types.InvalidLogin{}) {
		t.Errorf("the fault is lost in %v", err)
	}
}
