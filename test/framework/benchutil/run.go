// Package benchutil is what the benchmark programs in test/cmd share: runs in a fresh process per
// machine count, sweeps, request and reconcile counts, profiles, report tables and plots.
package benchutil

import (
	"context"
	"encoding/json"
	"os"
	"time"
)

// Phase is what one phase of a run (create, delete) cost the controller process.
type Phase struct {
	Name string
	Wall time.Duration
	// Calls are the hypervisor calls by method (vSphere methods, WinRM operations), CallTime
	// their time summed over calls.
	Calls    map[string]int
	CallTime time.Duration
	// Requests are the API server requests (or fake client calls) by "verb resource",
	// RequestTime their time summed over requests.
	Requests    map[string]int
	RequestTime time.Duration
	// Reconciles counts the machine controller's reconciles, Busy their time summed over workers.
	Reconciles int
	Busy       time.Duration
	// CPU is the process's CPU time (user + system) during the phase.
	CPU time.Duration
	// Counters are the bench's own counters (TLS connections, WinRM round trips) during the phase.
	Counters map[string]int64
	// Reads are the lookups of machines' VMs by the machine's provisioning state
	// (capwin_machine_vm_reads_total).
	Reads map[string]int
	// PeakRSS is the kernel's peak resident set during the phase (bytes), PeakHeap the largest
	// Go heap sampled, Heap the live heap after the phase (after a GC).
	PeakRSS, PeakHeap, Heap int64
}

// Run is one benchmark run: a setting and its phases.
type Run struct {
	Bench    string // "vcenter", "hyperv"
	Mode     string // how the controller met its API server: "kube-apiserver", "fake client"
	Machines int
	Workers  int
	// Unit names the hypervisor calls ("vSphere calls", "WinRM operations"), RequestUnit the
	// requests ("API requests", or "fake client calls" without an API server).
	Unit, RequestUnit string
	// Idle is before the first machine, After once the last one is gone and the process settled.
	IdleGoroutines, AfterGoroutines int
	IdleHeap, AfterHeap             int64
	// Quiet is how long the process was left alone before the after figures (Meter.Quiet).
	Quiet  time.Duration
	Phases []Phase
}

// QuietHelp describes the benchmarks' -quiet flag (Meter.Quiet).
const QuietHelp = "leave the process alone this long after the last phase before counting goroutines and heap (pooled connections left idle close after 90s: -quiet 100s shows the level they return to)"

// Meter takes the snapshots a Phase is the difference of.
type Meter struct {
	// Calls returns the hypervisor calls so far by method and their summed time.
	Calls func() (map[string]int, time.Duration)
	// Requests counts the API server requests (or fake client calls).
	Requests *Requests
	// Reconciles returns the machine controller's reconciles so far and their time summed over
	// workers (nil: not known).
	Reconciles func() (int, time.Duration)
	// Counters returns the bench's own counters so far (nil: none).
	Counters func() map[string]int64
	// Quiet is how long the process is left alone after the last phase before the goroutines
	// and the heap are counted: pooled connections that stay idle are closed after 90 s.
	Quiet time.Duration
}

// Mark is the start of a phase.
type Mark struct {
	m        *Meter
	start    time.Time
	calls    map[string]int
	reads    map[string]int
	callTime time.Duration
	reqs     map[string]int
	reqTime  time.Duration
	recs     int
	busy     time.Duration
	counters map[string]int64
	cpu      time.Duration
	heap     *HeapPeak
}

// Begin starts a phase.
func (m *Meter) Begin() *Mark {
	ResetPeakRSS()
	k := &Mark{m: m, heap: StartHeapPeak(100 * time.Millisecond), cpu: CPU()}
	k.calls, k.callTime = m.Calls()
	k.reads = vmReads()
	k.reqs, k.reqTime = m.Requests.Snapshot()
	if m.Reconciles != nil {
		k.recs, k.busy = m.Reconciles()
	}
	if m.Counters != nil {
		k.counters = m.Counters()
	}
	k.start = time.Now()
	return k
}

// End closes the phase begun at k.
func (k *Mark) End(name string) Phase {
	p := Phase{Name: name, Wall: time.Since(k.start), CPU: CPU() - k.cpu}
	calls, callTime := k.m.Calls()
	p.Calls, p.CallTime = Delta(k.calls, calls), callTime-k.callTime
	p.Reads = Delta(k.reads, vmReads())
	reqs, reqTime := k.m.Requests.Snapshot()
	p.Requests, p.RequestTime = Delta(k.reqs, reqs), reqTime-k.reqTime
	if k.m.Reconciles != nil {
		recs, busy := k.m.Reconciles()
		p.Reconciles, p.Busy = recs-k.recs, busy-k.busy
	}
	if k.m.Counters != nil {
		p.Counters = map[string]int64{}
		for c, v := range k.m.Counters() {
			p.Counters[c] = v - k.counters[c]
		}
	}
	_, p.PeakRSS = RSS()
	p.PeakHeap = k.heap.Stop()
	p.Heap = LiveHeap()
	return p
}

func vmReads() map[string]int { return CountsBy("capwin_machine_vm_reads_total", "state") }

// ToProvision is the phase's hypervisor calls less the reads of machines already provisioned
// (each one call: a VM read by its known reference, or one Hyper-V find), which poll for their
// Node at the guest poll interval for as long as the phase lasts: what it took to provision.
func (p Phase) ToProvision() int { return Sum(p.Calls) - p.Reads["Provisioned"] }

// Steps are one phase: its name and what it does.
type Steps struct {
	Name string
	Do   []func(context.Context) error
}

// Measure records the idle figures into r, runs each phase under the meter, then records the
// figures once the process settled.
func (m *Meter) Measure(ctx context.Context, r *Run, phases ...Steps) error {
	r.IdleGoroutines, r.IdleHeap = SettledGoroutines(5*time.Second), LiveHeap()
	if err := goroutineDump(".idle"); err != nil {
		return err
	}
	for _, ph := range phases {
		mark := m.Begin()
		for _, do := range ph.Do {
			if err := do(ctx); err != nil {
				return err
			}
		}
		r.Phases = append(r.Phases, mark.End(ph.Name))
	}
	r.Quiet = m.Quiet
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(m.Quiet):
	}
	r.AfterGoroutines, r.AfterHeap = SettledGoroutines(10*time.Second), LiveHeap()
	return goroutineDump(".after")
}

// Delta is after minus before, keeping only keys that grew.
func Delta(before, after map[string]int) map[string]int {
	d := map[string]int{}
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// Save writes the run as JSON (the sweep reads it back).
func (r *Run) Save(path string) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
