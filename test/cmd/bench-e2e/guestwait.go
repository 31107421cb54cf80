package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// guestWaits are a create phase's figures of the wait for the guests (with -guest-step-time):
// how often capwin read each machine's VM while its guest bootstrapped, and how long after a
// guest wrote a report the machine's status showed it.
type guestWaits struct {
	reads           map[string]float64 // VM reads per machine, by provisioning state
	reports, shown  int                // reports written by the phase's guests, and those the status showed
	delays          []float64          // seconds from a report to the status showing it, sorted
	bootstrapMedian float64            // seconds from a guest's first report to its last
}

// guestWaitStates are the states a machine waits for its guest in.
var guestWaitStates = []infrav1.ProvisioningState{infrav1.StateWaitingForAddresses, infrav1.StateProvisioned}

// measureGuestWaits takes the figures of the phase st from its counters, the running guests'
// reports and the timeline (a report is shown when its step first appears in the status).
func measureGuestWaits(st *step, reports map[string][]guest.Report, t *timeline) *guestWaits {
	w := &guestWaits{reads: map[string]float64{}}
	for _, s := range guestWaitStates {
		w.reads[string(s)] = float64(st.d.reads[string(s)]) / float64(max(st.machines, 1))
	}
	var boots []float64
	t.mu.Lock()
	defer t.mu.Unlock()
	for vm, rs := range reports {
		rs = slices.DeleteFunc(rs, func(r guest.Report) bool { return r.At.Before(st.start) })
		if len(rs) == 0 {
			continue
		}
		boots = append(boots, rs[len(rs)-1].At.Sub(rs[0].At).Seconds())
		marks := t.marks["infra/"+vm]
		for _, r := range rs {
			w.reports++
			if seen, ok := marks[iReport+r.Step]; ok && !seen.Before(r.At) {
				w.shown++
				w.delays = append(w.delays, seen.Sub(r.At).Seconds())
			}
		}
	}
	slices.Sort(w.delays)
	slices.Sort(boots)
	if len(boots) > 0 {
		w.bootstrapMedian = quantile(boots, 0.5)
	}
	return w
}

// printGuestWaits writes the guest-wait table of the create phases.
func (r *report) printGuestWaits(b *strings.Builder) {
	if r.cfg.guestStepTime <= 0 {
		return
	}
	fmt.Fprintf(b, "### Waiting for the guests\n\nEach simulated guest takes at least %s per bootstrap step (%d steps). Reads: lookups of a machine's VM on the hypervisor (capwin_machine_vm_reads_total) per machine of the phase, in the states a machine waits for its guest in. Delay: from a guest writing a report to the machine's status showing its step (first seen by this process's watch); a report overwritten before capwin read it is not shown.\n\n",
		r.cfg.guestStepTime, len(guest.Steps))
	fmt.Fprintln(b, "| phase | bootstrap (median) | reads / machine WaitingForAddresses | reads / machine Provisioned (until joined) | reports shown | delay median | delay p90 | delay max |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|")
	for _, s := range r.steps {
		w := s.guestWaits
		if w == nil {
			continue
		}
		med, p90, most := "–", "–", "–"
		if len(w.delays) > 0 {
			med, p90, most = secs(quantile(w.delays, 0.5)), secs(quantile(w.delays, 0.9)), secs(w.delays[len(w.delays)-1])
		}
		fmt.Fprintf(b, "| %s | %s | %.1f | %.1f | %d of %d | %s | %s | %s |\n", s.name, dur(time.Duration(w.bootstrapMedian*float64(time.Second))),
			w.reads[string(infrav1.StateWaitingForAddresses)], w.reads[string(infrav1.StateProvisioned)], w.shown, w.reports, med, p90, most)
	}
	fmt.Fprintln(b)
}
