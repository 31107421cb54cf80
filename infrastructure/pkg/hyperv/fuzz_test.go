package hyperv

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

// FuzzHostOutput feeds arbitrary runner output through what capwin makes of a host's answer to
// find.ps1: the result line, the outcome document, the VM view, its mark and the lifecycle's view.
func FuzzHostOutput(f *testing.F) {
	line := func(doc string) []byte {
		return []byte(ResultPrefix + base64.StdEncoding.EncodeToString([]byte(doc)) + "\r\n")
	}
	view := `{"id":"0b1c2d3e-0000-4000-8000-000000000001","name":"win-md-0-x","state":"Running",` +
		`"notes":"capwin-uid:u1\ncapwin-owner:ns/m\ncapwin-complete:u1\ncapwin-guest-run:pid=4012","heartbeat":true,` +
		`"nics":[{"mac":"02AABBCCDDEE","switch":"external","ips":["10.2.0.5","fe80::5"]}],` +
		`"dvds":["C:\\ProgramData\\capwin\\vms\\u1\\cidata.iso"],"disks":["C:\\ProgramData\\capwin\\disks\\u1.vhdx"],` +
		`"kvp":{"capwin.bootstrap.status":"{\"step\":\"join\",\"state\":\"Running\"}"}}`
	f.Add(line(`{"ok":true,"result":{"found":true,"vm":` + view + `}}`))
	f.Add(append([]byte("WARNING: the module was loaded\r\n"), line(`{"ok":true,"result":{"found":false}}`)...))
	f.Add(line(`{"ok":false,"error":{"kind":"AccessDenied","message":"Access is denied."}}`))
	f.Add(line(`{"ok":true,"result":{"found":true,"vm":{"id":"x","notes":"","nics":null,"dvds":null,"disks":["D:\\u1.vhdx"],"kvp":{}}}}`))
	f.Add([]byte("#< CLIXML\r\n" + ResultPrefix + "not base64\r\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, stdout []byte) {
		o, found, err := parseOutcome(stdout)
		if err != nil || !found || !o.OK {
			return
		}
		var fd Found
		if json.Unmarshal(o.Result, &fd) != nil || !fd.Found || fd.VM == nil {
			return
		}
		m, why := claim(fd.VM, []string{"u1"}, "ns/m")
		if why == "" && m.uid != "u1" && m.owner != "ns/m" && !hasDisk(fd.VM, "u1") {
			t.Fatalf("claimed a VM without the mark: %+v", fd.VM)
		}
		vm := observe("hv1", fd.VM, m)
		if len(vm.MACs) != len(fd.VM.NICs) || vm.Delivered != m.complete {
			t.Fatalf("observe: %+v from %+v", vm, fd.VM)
		}
	})
}
