package vcenter

import (
	"context"
	"errors"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

func TestMaybeSent(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"SOAP fault answered": {soap.WrapSoapFault(&soap.Fault{Code: "ServerFaultCode"}), false},
		"task fault":          {soap.WrapVimFault(&types.InvalidArgument{}), false},
		"connection refused":  {&url.Error{Op: "Post", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, false},
		"connection reset":    {&url.Error{Op: "Post", Err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}}, true},
		"timeout":             {&url.Error{Op: "Post", Err: context.DeadlineExceeded}, true},
		"unknown":             {errors.New("EOF"), true},
	} {
		if got := maybeSent(tc.err); got != tc.want {
			t.Errorf("%s: maybeSent = %v, want %v", name, got, tc.want)
		}
	}
}
