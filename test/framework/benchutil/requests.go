package benchutil

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Requests counts API server requests by verb and resource and sums their time (until the
// response headers; watches are counted but not timed). It is safe for concurrent use.
type Requests struct {
	mu    sync.Mutex
	n     map[string]int
	nanos int64
}

// Wrap makes every client built from cfg count into r (rest.Config.Wrap).
func (r *Requests) Wrap(cfg *rest.Config) {
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper{next: next, r: r}
	})
}

// Add counts one request (a fake client's call, say) that took d.
func (r *Requests) Add(verbResource string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[verbResource]++
	r.nanos += int64(d)
}

// Snapshot returns the counts by "verb resource" and the time summed over requests so far.
func (r *Requests) Snapshot() (map[string]int, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.n))
	for k, v := range r.n {
		out[k] = v
	}
	return out, time.Duration(r.nanos)
}

type roundTripper struct {
	next http.RoundTripper
	r    *Requests
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	verb, resource := RequestKind(req)
	start := time.Now()
	res, err := t.next.RoundTrip(req)
	d := time.Since(start)
	if verb == "watch" {
		d = 0
	}
	t.r.Add(verb+" "+resource, d)
	return res, err
}

// RequestKind names a request's verb (get, list, watch, create, update, patch, delete,
// deletecollection) and resource ("secrets", "vcentermachines/status"); paths that name no
// resource (discovery, health) are verb "get" of resource "non-resource".
func RequestKind(req *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return strings.ToLower(req.Method), "non-resource"
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		parts = parts[2:] // a namespaced resource, not a Namespace itself
	}
	resource = parts[0]
	named := len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(req.Method)
	}
	return verb, resource
}
