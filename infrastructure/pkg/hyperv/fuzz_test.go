package hyperv

import (
	"encoding/json"
	"strings"
	"testing"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// fuzzDisks is the spec the fuzzed views are read against.
var fuzzDisks = []infrav1.HyperVDataDisk{{Name: "data", SizeGiB: 1}, {Name: "logs", SizeGiB: 2, Type: infrav1.DiskFixed}}

// FuzzHostOutput feeds arbitrary runner output through what capwin makes of a host's answer to
// find.ps1: the result line, the outcome document, the VM view, its mark and the lifecycle's view.
func FuzzHostOutput(f *testing.F) {
	line := func(doc string) []byte {
		return []byte(wire.ResultLine("n", []byte(doc)) + "\r\n")
	}
	view := `{"id":"0b1c2d3e-0000-4000-8000-000000000001","name":"win-md-0-x","state":"Running",` +
		`"notes":"capwin-uid:u1\ncapwin-owner:ns/m\ncapwin-complete:u1\ncapwin-guest-run:pid=4012","heartbeat":true,` +
		`"nics":[{"mac":"02AABBCCDDEE","switch":"external","ips":["10.2.0.5","fe80::5"]}],` +
		`"dvds":["C:\\ProgramData\\capwin\\vms\\u1\\cidata.iso"],` +
		`"disks":[{"path":"C:\\ProgramData\\capwin\\disks\\u1.vhdx","controller":"SCSI","controllerNumber":0,"location":0},` +
		`{"path":"C:\\ProgramData\\capwin\\vms\\u1\\data.vhdx","controller":"SCSI","controllerNumber":0,"location":1},` +
		`{"path":"C:\\ProgramData\\capwin\\vms\\u1\\LOGS.vhdx","controller":"SCSI","controllerNumber":1,"location":2}],` +
		`"kvp":{"capwin.bootstrap.status":"{\"step\":\"join\",\"state\":\"Running\"}"}}`
	f.Add(line(`{"ok":true,"result":{"found":true,"vm":` + view + `}}`))
	f.Add(append([]byte("WARNING: the module was loaded\r\n"), line(`{"ok":true,"result":{"found":false}}`)...))
	f.Add(line(`{"ok":false,"error":{"kind":"AccessDenied","message":"Access is denied."}}`))
	f.Add(line(`{"ok":true,"result":{"found":true,"vm":{"id":"x","notes":"","nics":null,"dvds":null,"disks":[{"path":"D:\\u1.vhdx"},{"path":"logs.vhdx","controller":"scsi","location":7}],"kvp":{}}}}`))
	f.Add([]byte("#< CLIXML\r\n" + wire.ResultPrefix + "n:not base64\r\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, stdout []byte) {
		o, found, err := parseOutcome(stdout, "n")
		if err != nil || !found || !o.OK {
			return
		}
		var fd wire.Found
		if json.Unmarshal(o.Result, &fd) != nil || !fd.Found || fd.VM == nil {
			return
		}
		m, why := claim(fd.VM, []string{"u1"}, "ns/m")
		if why == "" && m.uid != "u1" && m.owner != "ns/m" && !hasDisk(fd.VM, "u1") {
			t.Fatalf("claimed a VM without the mark: %+v", fd.VM)
		}
		vm := observe("hv1", "hv1", fd.VM, m, fuzzDisks)
		if len(vm.MACs) != len(fd.VM.NICs) || vm.Delivered != m.complete {
			t.Fatalf("observe: %+v from %+v", vm, fd.VM)
		}
		checkDataDisks(t, vm.DataDisks, fd.VM)
	})
}

// checkDataDisks: every reported data disk is a spec disk, once, in spec order, with the location
// of a drive of that file on SCSI controller 0 as its LUN and target 0.
func checkDataDisks(t *testing.T, got []infrav1.DataDiskStatus, v *wire.View) {
	next := 0
	for _, d := range got {
		i := next
		for i < len(fuzzDisks) && fuzzDisks[i].Name != d.Name {
			i++
		}
		if i == len(fuzzDisks) || d.Target != 0 {
			t.Fatalf("data disks %+v from %+v: %+v is not a spec disk in order", got, v.Disks, d)
		}
		next = i + 1
		attached := false
		for _, dv := range v.Disks {
			attached = attached || (strings.EqualFold(dv.Controller, "SCSI") && dv.ControllerNumber == 0 && dv.Location == d.LUN &&
				strings.EqualFold(fileName(dv.Path), string(d.Name)+".vhdx"))
		}
		if !attached {
			t.Fatalf("data disks %+v from %+v: %+v is attached nowhere", got, v.Disks, d)
		}
	}
}
