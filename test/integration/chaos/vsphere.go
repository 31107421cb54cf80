package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// vsphereFaults sits between capwin's vCenter sessions and vcsim (session.Sessions.WrapTransport): while
// on, each call may be delayed, dropped before it is sent, answered but its answer lost, or
// refused as from an expired session, and a clone may be sent so that its task fails. It also counts the calls that would change a decoy VM.
type vsphereFaults struct {
	rates Rates
	on    atomic.Bool

	mu  sync.Mutex
	rng *rand.Rand

	delayed, dropped, lost, expired, failed atomic.Int64
	// decoys are the references of VMs capwin did not create; decoyChanges counts calls that
	// would change one of them.
	decoys       sync.Map // string -> bool
	decoyChanges atomic.Int64
}

func newVSphereFaults(r Rates, seed uint64) *vsphereFaults {
	return &vsphereFaults{rates: r, rng: rand.New(rand.NewPCG(seed, 1))}
}

// wrap is session.Sessions.WrapTransport.
func (f *vsphereFaults) wrap(next soap.RoundTripper) soap.RoundTripper {
	return faultyTripper{f: f, next: next}
}

func (f *vsphereFaults) roll() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64()
}

func (f *vsphereFaults) delay() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Duration(f.rng.Int64N(int64(f.rates.MaxDelay) + 1))
}

type faultyTripper struct {
	f    *vsphereFaults
	next soap.RoundTripper
}

// errInjected marks an injected transport failure.
var errInjected = errors.New("chaos: connection reset")

func (t faultyTripper) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	f := t.f
	method, this := call(req)
	if mutates(method) {
		if _, ok := f.decoys.Load(this); ok {
			f.decoyChanges.Add(1)
		}
	}
	if !f.on.Load() || method == "Login" || method == "Logout" {
		return t.next.RoundTrip(ctx, req, res)
	}
	if clone, ok := req.(*methods.CloneVM_TaskBody); ok && clone.Req != nil && f.roll() < f.rates.Fail {
		f.failed.Add(1)
		return t.next.RoundTrip(ctx, failingClone(clone), res)
	}
	r := f.roll()
	switch rates := f.rates; {
	case r < rates.Drop:
		f.dropped.Add(1)
		return errInjected
	case r < rates.Drop+rates.Lose:
		f.lost.Add(1)
		if err := t.next.RoundTrip(ctx, req, res); err != nil {
			return err
		}
		return errInjected // the server acted; its answer never arrives
	case r < rates.Drop+rates.Lose+rates.Expire:
		f.expired.Add(1)
		return notAuthenticated()
	case r < rates.Drop+rates.Lose+rates.Expire+rates.Delay:
		f.delayed.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(f.delay()):
		}
	}
	return t.next.RoundTrip(ctx, req, res)
}

// failingClone is a copy of a clone request that vCenter accepts and whose task then fails:
// without a resource pool, the clone of a template fails with InvalidArgument.
func failingClone(body *methods.CloneVM_TaskBody) *methods.CloneVM_TaskBody {
	req := *body.Req
	req.Spec.Location.Pool = nil
	return &methods.CloneVM_TaskBody{Req: &req}
}

// notAuthenticated is vCenter's answer to a call on an expired session.
func notAuthenticated() error {
	fault := &soap.Fault{Code: "ServerFaultCode", String: "The session is not authenticated."}
	fault.Detail.Fault = &types.NotAuthenticated{}
	return soap.WrapSoapFault(fault)
}

// call returns a request's method name and the managed object it is called on.
func call(req soap.HasFault) (method, this string) {
	v := reflect.ValueOf(req)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	method = strings.TrimSuffix(v.Type().Name(), "Body")
	if v.Kind() != reflect.Struct || v.NumField() == 0 {
		return method, ""
	}
	r := v.Field(0)
	if r.Kind() == reflect.Pointer {
		if r.IsNil() {
			return method, ""
		}
		r = r.Elem()
	}
	if r.Kind() != reflect.Struct {
		return method, ""
	}
	if fv := r.FieldByName("This"); fv.IsValid() {
		if ref, ok := fv.Interface().(types.ManagedObjectReference); ok {
			return method, ref.Value
		}
	}
	return method, ""
}

// mutates reports whether a vSphere method changes the VM it is called on.
func mutates(method string) bool {
	switch strings.TrimSuffix(method, "_Task") {
	case "ReconfigVM", "PowerOnVM", "PowerOffVM", "ShutdownGuest", "RebootGuest", "ResetVM", "SuspendVM",
		"Destroy", "UnregisterVM", "MarkAsTemplate", "RelocateVM":
		return true
	}
	return false
}
