//go:build e2e

package main

import (
	"fmt"
	"io"
	"net/http"
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
	// keys are the guest keys by VM reference value (vCenter: the collector names its VM so).
	keys map[string]string
}

// windowsJournal is one Windows guest's disk and event logs, and what Save-State lists of it.
type windowsJournal struct {
	*simguest.Journal
	hostname string
	build    int
	joined   atomic.Bool
}

// add starts the journal of the guest with that key; ref, when set, is its VM's reference value.
func (j *journals) add(key, ref, hostname string, build int) *windowsJournal {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.byKey == nil {
		j.byKey, j.keys = map[string]*windowsJournal{}, map[string]string{}
	}
	wj := &windowsJournal{Journal: simguest.NewJournal(), hostname: hostname, build: build}
	j.byKey[key] = wj
	if ref != "" {
		j.keys[ref] = key
	}
	return wj
}

func (j *journals) remove(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.byKey, key)
	for ref, k := range j.keys {
		if k == key {
			delete(j.keys, ref)
		}
	}
}

// keyOfRef is the guest key of a VM reference value ("" if none).
func (j *journals) keyOfRef(ref string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.keys[ref]
}

// serveCollect runs a log collector in a vSphere guest for vcsim (its -guest-agent): POST
// collectPath?vm=<VM reference value> with the rendered collect.ps1; the answer is the zip.
func (j *journals) serveCollect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST the collector script", http.StatusMethodNotAllowed)
		return
	}
	script, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ref := r.URL.Query().Get("vm")
	zip, err := j.collect(j.keyOfRef(ref), script)
	if err != nil {
		http.Error(w, fmt.Sprintf("VM %s: %v", ref, err), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	_, _ = w.Write(zip)
}

// collectPath is where vcsim asks for a collector run (test/e2e/kind/vcsim).
const collectPath = "/guest/collect"

// collect runs a log collector (a rendered collect.ps1) in the guest with that key.
func (j *journals) collect(key string, script []byte) ([]byte, error) {
	j.mu.Lock()
	wj := j.byKey[key]
	j.mu.Unlock()
	if wj == nil {
		return nil, fmt.Errorf("no Windows guest runs in VM %s", key)
	}
	joined := wj.joined.Load()
	return wj.Collect(script, wj.hostname, simguest.SavedState(wj.build, joined, joined))
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
