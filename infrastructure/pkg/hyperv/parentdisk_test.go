package hyperv

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
)

var fuzzSource = &infrav1.HyperVParentDiskSource{URL: `\\fs01\images\win.vhdx`, SHA256: strings.Repeat("AB", 32)}

// TestParentPath: each answer of parent.ps1 and what create makes of it.
func TestParentPath(t *testing.T) {
	want := `D:\disks\parents\` + strings.Repeat("ab", 32) + ".vhdx"
	cases := []struct {
		name   string
		st     wire.ParentState
		path   string
		reason string // hypervisor.Reason of the error; "" = none
	}{
		{"ready", wire.ParentState{State: wire.ParentReady, Path: strings.ToUpper(want)}, want, ""},
		{"ready elsewhere", wire.ParentState{State: wire.ParentReady, Path: `D:\disks\other.vhdx`}, "", infrav1.HypervisorErrorReason},
		{"copying", wire.ParentState{State: wire.ParentCopying, Path: want}, "", infrav1.HypervisorErrorReason},
		{"mismatch", wire.ParentState{State: wire.ParentFailed, Kind: wire.KindInvalidSpec, Message: "does not match the pinned SHA-256 x"}, "", infrav1.InvalidSpecReason},
		{"copy failed", wire.ParentState{State: wire.ParentFailed, Kind: wire.KindFailed, Message: "access denied"}, "", infrav1.HypervisorErrorReason},
		{"unknown", wire.ParentState{State: "paused"}, "", infrav1.HypervisorErrorReason},
	}
	for _, c := range cases {
		path, err := parentPath(c.st, "hv1", `D:\disks\`, fuzzSource)
		if path != c.path || (err == nil) != (c.reason == "") || (err != nil && hypervisor.Reason(err) != c.reason) {
			t.Errorf("%s: %q, %v; want %q with reason %q", c.name, path, err, c.path, c.reason)
		}
		var pending *hypervisor.CreatePending
		if errors.As(err, &pending) != (c.st.State == wire.ParentCopying) {
			t.Errorf("%s: %v is a CreatePending only while copying", c.name, err)
		}
	}
}

// TestVMSettingsDefaults: a spec without settings keeps what create.ps1 always set.
func TestVMSettingsDefaults(t *testing.T) {
	if got, want := DefaultVMSettings(), (wire.VMSettings{AutomaticStartDelay: -1, AutomaticStopAction: "TurnOff"}); got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	doc, err := json.Marshal(DefaultVMSettings())
	if err != nil || string(doc) != `{"automaticCheckpoints":false,"automaticStartDelay":-1,"automaticStopAction":"TurnOff"}` {
		t.Fatalf("defaults as JSON %s, %v", doc, err)
	}
}

// FuzzParentOutput feeds arbitrary runner output through what capwin makes of parent.ps1's
// answer: a path only when ready and only the cache path of the source's hash; otherwise an error.
func FuzzParentOutput(f *testing.F) {
	line := func(doc string) []byte {
		return []byte(wire.ResultLine("n", []byte(doc)) + "\r\n")
	}
	f.Add(line(`{"ok":true,"result":{"state":"ready","path":"C:\\disks\\parents\\` + strings.Repeat("ab", 32) + `.vhdx"}}`))
	f.Add(line(`{"ok":true,"result":{"state":"copying","path":"x"}}`))
	f.Add(line(`{"ok":true,"result":{"state":"failed","kind":"InvalidSpec","message":"does not match the pinned SHA-256 00"}}`))
	f.Add(line(`{"ok":true,"result":{"state":"ready","path":null}}`))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, stdout []byte) {
		o, found, err := parseOutcome(stdout, "n")
		if err != nil || !found || !o.OK {
			return
		}
		var st wire.ParentState
		if json.Unmarshal(o.Result, &st) != nil {
			return
		}
		path, err := parentPath(st, "hv1", `C:\disks`, fuzzSource)
		if (path == "") == (err == nil) {
			t.Fatalf("%+v: path %q with error %v", st, path, err)
		}
		if err == nil && (st.State != wire.ParentReady || path != wire.ParentCachePath(`C:\disks`, fuzzSource.SHA256)) {
			t.Fatalf("%+v: path %q", st, path)
		}
	})
}
