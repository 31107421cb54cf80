package main

import (
	"bufio"
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	capwinmetrics "github.com/capwin/capwin/internal/test/metrics"
	"github.com/capwin/capwin/test/framework/benchutil"
	"github.com/capwin/capwin/test/framework/vcsim"
)

// ctrlStat is one controller's work, from controller-runtime's metrics registry.
type ctrlStat struct {
	// reconciles counts controller-runtime's calls of Reconcile (controller_runtime_reconcile_total),
	// errors those that failed. For controllers built with CAPI's builder (CAPI core's and
	// capwin's), a call returns at once, requeued, when the object was reconciled less than a
	// second ago or the cache has not seen the controller's last write yet; ran counts the calls
	// that got past both (capi_reconcile_total) and stale those held back by the cache.
	reconciles, errors, ran, stale float64
	capi                           bool    // the controller reports capi_reconcile_total
	busy                           float64 // seconds in Reconcile (controller_runtime_reconcile_time_seconds)
	waits, waited                  float64 // items that left the work queue and their seconds in it
}

// counters are the cumulative figures read at the start and the end of a phase.
type counters struct {
	ctrl     map[string]ctrlStat
	requests map[string]float64 // apiserver_request_total of the management apiserver by "VERB resource"
	calls    map[string]int     // vSphere calls by method, or WinRM operations under one key
	dials    int64              // TLS connections opened to vCenter
	webhooks map[string]hist    // admission and conversion webhooks served in this process, by path
	reads    map[string]int     // lookups of machines' VMs by provisioning state (capwin_machine_vm_reads_total)
}

// hist is a histogram's count and sum (seconds).
type hist struct{ n, sum float64 }

// sources are where the counters come from.
type sources struct {
	apiserver *kubernetes.Clientset
	calls     *vcsim.Calls
}

func newSources(cfg *rest.Config, calls *vcsim.Calls) (*sources, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &sources{apiserver: cs, calls: calls}, nil
}

func (s *sources) read(ctx context.Context) (counters, error) {
	stats, hooks := controllerStats()
	c := counters{ctrl: stats, webhooks: hooks, calls: s.calls.Snapshot(), dials: capwinmetrics.VCenterConnections(),
		reads: benchutil.CountsBy("capwin_machine_vm_reads_total", "state")}
	if ops, trips, _ := capwinmetrics.WinRM(); ops > 0 {
		c.calls[winrmOps] = int(ops)
		c.calls[winrmTrips] = int(trips)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body, err := s.apiserver.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return c, err
	}
	c.requests = apiserverRequests(body)
	return c, nil
}

// Keys of the WinRM counters in counters.calls (Hyper-V).
const (
	winrmOps   = "WinRM operations"
	winrmTrips = "WinRM HTTP round trips"
)

// controllerStats sums controller-runtime's reconcile and work queue metrics by controller, and
// its webhook latency by path.
func controllerStats() (map[string]ctrlStat, map[string]hist) {
	out, hooks := map[string]ctrlStat{}, map[string]hist{}
	families, err := metrics.Registry.Gather()
	if err != nil {
		return out, hooks
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetName() {
			case "controller_runtime_reconcile_total":
				s := out[labels["controller"]]
				s.reconciles += m.GetCounter().GetValue()
				if labels["result"] == "error" {
					s.errors += m.GetCounter().GetValue()
				}
				out[labels["controller"]] = s
			case "capi_reconcile_total":
				s := out[labels["controller"]]
				s.ran += m.GetCounter().GetValue()
				s.capi = true
				out[labels["controller"]] = s
			case "capi_reconcile_stale_cache_skips_total":
				s := out[labels["controller"]]
				s.stale += m.GetCounter().GetValue()
				out[labels["controller"]] = s
			case "controller_runtime_reconcile_time_seconds":
				s := out[labels["controller"]]
				s.busy += m.GetHistogram().GetSampleSum()
				out[labels["controller"]] = s
			case "workqueue_queue_duration_seconds":
				name := labels["name"]
				if name == "" {
					name = labels["controller"]
				}
				s := out[name]
				s.waits += float64(m.GetHistogram().GetSampleCount())
				s.waited += m.GetHistogram().GetSampleSum()
				out[name] = s
			case "controller_runtime_webhook_latency_seconds":
				h := hooks[labels["webhook"]]
				h.n += float64(m.GetHistogram().GetSampleCount())
				h.sum += m.GetHistogram().GetSampleSum()
				hooks[labels["webhook"]] = h
			}
		}
	}
	return out, hooks
}

// apiserverRequests sums apiserver_request_total of a Prometheus text exposition by verb and
// resource (with group and subresource).
func apiserverRequests(body []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	const prefix = "apiserver_request_total{"
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		end := strings.LastIndex(line, "}")
		if end < 0 {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		l := labelsOf(line[len(prefix):end])
		res := l["resource"]
		if l["group"] != "" {
			res += "." + l["group"]
		}
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		if res == "" {
			res = "(non-resource)"
		}
		out[l["verb"]+" "+res] += v
	}
	return out
}

// labelsOf parses `a="x",b="y"` (the apiserver's label values hold no quotes or commas).
func labelsOf(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// sub is after minus before.
func sub(after, before counters) counters {
	d := counters{ctrl: map[string]ctrlStat{}, requests: map[string]float64{}, calls: map[string]int{}, webhooks: map[string]hist{},
		dials: after.dials - before.dials, reads: map[string]int{}}
	for k, a := range after.reads {
		d.reads[k] = a - before.reads[k]
	}
	for k, a := range after.webhooks {
		if h := (hist{n: a.n - before.webhooks[k].n, sum: a.sum - before.webhooks[k].sum}); h.n > 0 {
			d.webhooks[k] = h
		}
	}
	for k, a := range after.ctrl {
		b := before.ctrl[k]
		s := ctrlStat{reconciles: a.reconciles - b.reconciles, errors: a.errors - b.errors, ran: a.ran - b.ran,
			stale: a.stale - b.stale, capi: a.capi, busy: a.busy - b.busy, waits: a.waits - b.waits, waited: a.waited - b.waited}
		if s.reconciles > 0 || s.waits > 0 {
			d.ctrl[k] = s
		}
	}
	for k, a := range after.requests {
		if v := a - before.requests[k]; v > 0 {
			d.requests[k] = v
		}
	}
	for k, a := range after.calls {
		if v := a - before.calls[k]; v > 0 {
			d.calls[k] = v
		}
	}
	return d
}
