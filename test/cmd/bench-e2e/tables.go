package main

import (
	"fmt"
	"strings"

	"github.com/capwin/capwin/test/framework/benchutil"
	"github.com/capwin/capwin/test/framework/harness"
)

// printControllers: reconcile calls per machine by controller and phase.
func (r *report) printControllers(b *strings.Builder) {
	names := map[string]float64{}
	for _, s := range r.steps {
		for k, cs := range s.d.ctrl {
			names[k] += cs.reconciles
		}
	}
	fmt.Fprintln(b, "Reconcile calls per machine (controller_runtime_reconcile_total; in brackets those that ran, capi_reconcile_total — the rest were held back by the 1/s per-object rate limit or a stale cache):")
	fmt.Fprintln(b)
	header(b, "controller", r.steps)
	for _, k := range benchutil.ByValue(names) {
		fmt.Fprintf(b, "| %s |", k)
		for _, s := range r.steps {
			cs := s.d.ctrl[k]
			if cs.capi {
				fmt.Fprintf(b, " %.2f (%.2f) |", per(cs.reconciles, s), per(cs.ran, s))
			} else {
				fmt.Fprintf(b, " %.2f |", per(cs.reconciles, s))
			}
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b)
}

// printDetail: how busy each controller was in one phase.
func printDetail(b *strings.Builder, s *step) {
	fmt.Fprintf(b, "%s (%s) by controller — busy workers is the time spent in Reconcile divided by the wall time:\n\n", s.name, dur(s.wall))
	fmt.Fprintln(b, "| controller | reconcile calls | ran | rate-limited | stale cache | errors | mean reconcile | busy workers | mean queue wait |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|")
	calls := map[string]float64{}
	for k, cs := range s.d.ctrl {
		calls[k] = cs.reconciles
	}
	for _, k := range benchutil.ByValue(calls) {
		cs := s.d.ctrl[k]
		ran, limited, stale := "–", "–", "–"
		if cs.capi {
			ran, limited, stale = fmt.Sprint(cs.ran), fmt.Sprint(cs.reconciles-cs.ran-cs.stale), fmt.Sprint(cs.stale)
		}
		mean, wait := "–", "–"
		if cs.reconciles > 0 {
			mean = secs(cs.busy / cs.reconciles)
		}
		if cs.waits > 0 {
			wait = secs(cs.waited / cs.waits)
		}
		fmt.Fprintf(b, "| %s | %.0f | %s | %s | %s | %.0f | %s | %.2f | %s |\n",
			k, cs.reconciles, ran, limited, stale, cs.errors, mean, cs.busy/s.wall.Seconds(), wait)
	}
	fmt.Fprintln(b)
}

// printCalls: hypervisor calls per machine by method and phase.
func (r *report) printCalls(b *strings.Builder) {
	methods := map[string]float64{}
	for _, s := range r.steps {
		for k, v := range s.d.calls {
			methods[k] += float64(v)
		}
	}
	if len(methods) == 0 {
		return
	}
	what := "vSphere calls per machine by method (capwin's sessions only; the harness's VM watcher uses its own)"
	if r.cfg.provider == harness.HyperV {
		what = "WinRM per machine (capwin's connections)"
	}
	fmt.Fprintf(b, "%s:\n\n", what)
	header(b, "method", r.steps)
	for _, k := range benchutil.ByValue(methods) {
		fmt.Fprintf(b, "| %s |", k)
		for _, s := range r.steps {
			fmt.Fprintf(b, " %.2f |", per(float64(s.d.calls[k]), s))
		}
		fmt.Fprintln(b)
	}
	if r.cfg.provider == harness.VCenter {
		fmt.Fprint(b, "| (TLS connections opened, total) |")
		for _, s := range r.steps {
			fmt.Fprintf(b, " %d |", s.d.dials)
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b)
}

// printWebhooks: admission/conversion webhook calls served by this process, per machine, and
// their mean latency.
func (r *report) printWebhooks(b *strings.Builder) {
	paths := map[string]float64{}
	for _, s := range r.steps {
		for k, h := range s.d.webhooks {
			paths[k] += h.n
		}
	}
	if len(paths) == 0 {
		return
	}
	fmt.Fprint(b, "Webhooks served by this process (CAPI's and capwin's), calls per machine · mean latency (controller_runtime_webhook_latency_seconds):\n\n")
	header(b, "webhook", r.steps)
	top := benchutil.ByValue(paths)
	if len(top) > 12 {
		top = top[:12]
	}
	for _, k := range top {
		fmt.Fprintf(b, "| %s |", k)
		for _, s := range r.steps {
			h := s.d.webhooks[k]
			if h.n == 0 {
				fmt.Fprint(b, " – |")
				continue
			}
			fmt.Fprintf(b, " %.2f · %s |", per(h.n, s), secs(h.sum/h.n))
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b)
}

// printRequests: management apiserver requests per machine by verb, then the busiest verb and
// resource pairs.
func (r *report) printRequests(b *strings.Builder) {
	verbs, pairs := map[string]float64{}, map[string]float64{}
	for _, s := range r.steps {
		for k, v := range s.d.requests {
			verb, _, _ := strings.Cut(k, " ")
			verbs[verb] += v
			pairs[k] += v
		}
	}
	if len(pairs) == 0 {
		return
	}
	fmt.Fprint(b, "Management apiserver requests per machine (apiserver_request_total from its /metrics):\n\n")
	header(b, "verb / resource", r.steps)
	row := func(label string, get func(*step) float64) {
		fmt.Fprintf(b, "| %s |", label)
		for _, s := range r.steps {
			fmt.Fprintf(b, " %.2f |", per(get(s), s))
		}
		fmt.Fprintln(b)
	}
	for _, v := range benchutil.ByValue(verbs) {
		row("**"+v+"**", func(s *step) float64 {
			n := 0.0
			for k, c := range s.d.requests {
				if strings.HasPrefix(k, v+" ") {
					n += c
				}
			}
			return n
		})
	}
	top := benchutil.ByValue(pairs)
	if len(top) > 15 {
		top = top[:15]
	}
	for _, k := range top {
		row(k, func(s *step) float64 { return s.d.requests[k] })
	}
	fmt.Fprintln(b)
}

// header starts a table with one column per phase.
func header(b *strings.Builder, first string, steps []*step) {
	fmt.Fprintf(b, "| %s |", first)
	for _, s := range steps {
		fmt.Fprintf(b, " %s |", s.name)
	}
	fmt.Fprint(b, "\n|---|")
	for range steps {
		fmt.Fprint(b, "---|")
	}
	fmt.Fprintln(b)
}
