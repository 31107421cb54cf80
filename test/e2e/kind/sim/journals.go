//go:build e2e

package main

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	simguest "github.com/capwin/capwin/test/framework/harness/guest"
)

// BrokenImageAnnotation on a Machine makes its Windows guest an image whose cloudbase-init cannot
// run the user data: the VM runs and reports its address, the node never joins, and only the
// guest's own logs say why (what `render logs` reads through the hypervisor's guest channel).
const BrokenImageAnnotation = "e2e.capwin.io/broken-image"

// journals are what the Windows guests leave for capwin's log collector (simguest.Journal), by
// guest key. The poll loop writes them; the hypervisors' handlers read them on their own
// goroutines, hence the lock.
type journals struct {
	mu    sync.Mutex
	byKey map[string]*windowsJournal
}

// windowsJournal is one Windows guest's disk and event logs, and what Save-State lists of it.
type windowsJournal struct {
	*simguest.Journal
	hostname string
	build    int
	joined   atomic.Bool
}

func (j *journals) add(key, hostname string, build int) *windowsJournal {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.byKey == nil {
		j.byKey = map[string]*windowsJournal{}
	}
	wj := &windowsJournal{Journal: simguest.NewJournal(), hostname: hostname, build: build}
	j.byKey[key] = wj
	return wj
}

func (j *journals) remove(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.byKey, key)
}

// collect runs a log collector (a rendered collect.ps1) in the guest with that key.
func (j *journals) collect(key string, script []byte) ([]byte, error) {
	j.mu.Lock()
	wj := j.byKey[key]
	j.mu.Unlock()
	if wj == nil {
		return nil, fmt.Errorf("no Windows guest runs in VM %s", key)
	}
	return wj.Collect(script, wj.hostname, wj.state())
}

// state is Save-State's listings: the services, and HNS as hnsdiag lists it (the Containers
// feature's nat network; the CNI's overlay network once the node joined).
func (wj *windowsJournal) state() map[string]string {
	kubelet, hns := "Stopped", "Networks:\r\nName      Type\r\nnat       NAT\r\n"
	if wj.joined.Load() {
		kubelet, hns = "Running", hns+"vxlan0    Overlay\r\n"
	}
	return map[string]string{
		"services": "Name        Status  StartType\r\ncontainerd  Running Automatic\r\nkubelet     " + kubelet + " Automatic\r\n",
		"hnsdiag":  hns,
		"computer": fmt.Sprintf("Caption     : Microsoft Windows Server\r\nBuildNumber : %d\r\n", wj.build),
	}
}

// step is bootstrap.ps1's Write-Log of a status report: a line in the bootstrap log.
func (wj *windowsJournal) step(doc *userdata.Document, r simguest.Report) {
	if wj == nil {
		return
	}
	wj.Line(doc.Paths.LogFile, fmt.Sprintf("[%s] %s %s", r.Step, r.State, r.Message))
}

// joinedAs is what the services log once the node joined: containerd's start and the kubelet's
// registration, in the files the bootstrap gave them.
func (wj *windowsJournal) joinedAs(doc *userdata.Document, node string) {
	if wj == nil {
		return
	}
	if doc.Containerd.LogFile != "" {
		wj.Line(doc.Containerd.LogFile, `level=info msg="containerd successfully booted"`)
	}
	if doc.Kubelet.LogRunner.LogFile != "" {
		wj.Line(doc.Kubelet.LogRunner.LogFile, `I kubelet_node_status.go:75] "Successfully registered node" node="`+strings.ToLower(node)+`"`)
	}
	wj.joined.Store(true)
}
