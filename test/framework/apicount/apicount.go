// Package apicount sees the requests a client sends to the API server (a rest.Config.Wrap
// round tripper) and names each by its RBAC verb and resource, to count them in tests.
package apicount

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Access is one authorization decision as RBAC sees a request: verb, group, resource (with
// subresource) and namespace, or a non-resource path.
type Access struct {
	Verb, Group, Resource, Namespace string
	Path                             string // non-resource URL (discovery, /version)
}

func (a Access) String() string {
	if a.Resource == "" {
		return a.Verb + " " + a.Path
	}
	res := a.Resource
	if a.Group != "" {
		res = a.Group + "/" + res
	}
	switch {
	case a.Namespace != "":
		return fmt.Sprintf("%s %s in namespace %s", a.Verb, res, a.Namespace)
	case a.Verb == "list" || a.Verb == "watch":
		return fmt.Sprintf("%s %s (all namespaces or cluster-scoped)", a.Verb, res)
	}
	return a.Verb + " " + res
}

// Of derives the RBAC verb and resource of a request to the apiserver's REST paths.
func Of(req *http.Request) Access {
	p := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var a Access
	var rest []string
	switch {
	case len(p) > 2 && p[0] == "api":
		rest = p[2:]
	case len(p) > 3 && p[0] == "apis":
		a.Group, rest = p[1], p[3:]
	default:
		return Access{Verb: strings.ToLower(req.Method), Path: req.URL.Path}
	}
	if rest[0] == "namespaces" && len(rest) > 2 {
		a.Namespace, rest = rest[1], rest[2:]
	}
	a.Resource = rest[0]
	named := len(rest) > 1
	if len(rest) > 2 {
		a.Resource += "/" + rest[2]
	}
	q := req.URL.Query()
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		a.Verb = "list"
		if named {
			a.Verb = "get"
		}
		if w := q.Get("watch"); w == "true" || w == "1" {
			a.Verb = "watch"
		}
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "deletecollection"
		if named {
			a.Verb = "delete"
		}
	default:
		a.Verb = strings.ToLower(req.Method)
	}
	return a
}

// Counter counts the requests of the clients whose rest.Config it wraps, by verb and resource.
type Counter struct {
	mu sync.Mutex
	n  map[Access]int
}

// Wrap is a transport.WrapperFunc for rest.Config.Wrap. Namespaces are not told apart.
func (c *Counter) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		a := Of(req)
		a.Namespace = ""
		c.mu.Lock()
		if c.n == nil {
			c.n = map[Access]int{}
		}
		c.n[a]++
		c.mu.Unlock()
		return next.RoundTrip(req)
	})
}

// Take returns the counts since the last Take (or the start) and starts again from zero.
func (c *Counter) Take() map[Access]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.n)
	c.n = nil
	if out == nil {
		out = map[Access]int{}
	}
	return out
}

// Rates divides counts by n (e.g. the reconciles that made them).
func Rates(counts map[Access]int, n int) map[Access]float64 {
	out := map[Access]float64{}
	for a, c := range counts {
		out[a] = float64(c) / float64(n)
	}
	return out
}

// Format lists rates by access, sorted ("none" when empty).
func Format(rates map[Access]float64) string {
	var out []string
	for a, v := range rates {
		out = append(out, fmt.Sprintf("%s %.2f", a, v))
	}
	if len(out) == 0 {
		return "none"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// Grown names the accesses whose rate in large exceeds that in small by more than slack.
func Grown(small, large map[Access]float64, slack float64) []string {
	var out []string
	for a, v := range large {
		if v > small[a]+slack {
			out = append(out, fmt.Sprintf("%s: %.2f, was %.2f", a, v, small[a]))
		}
	}
	slices.Sort(out)
	return out
}

// Steady measures a controller's requests per reconcile at each machine count: machines(n)
// makes n machines and returns one pass that reconciles each of them once. After a first pass
// (which starts the informers the reconciles read) it counts rounds passes. It returns what is
// wrong: a Secret read from the API server, or requests per reconcile that grow from the
// first count to the last; logf reports each count's rates.
func (c *Counter) Steady(counts []int, rounds int, machines func(n int) (pass func()), logf func(string, ...any)) []string {
	var problems []string
	per := map[int]map[Access]float64{}
	for _, n := range counts {
		pass := machines(n)
		pass()
		c.Take()
		for range rounds {
			pass()
		}
		per[n] = Rates(c.Take(), n*rounds)
		logf("%d machines: management-cluster requests per reconcile: %s", n, Format(per[n]))
		if _, ok := per[n][Access{Verb: "get", Resource: "secrets"}]; ok {
			problems = append(problems, fmt.Sprintf("%d machines: a reconcile reads a Secret from the API server", n))
		}
	}
	for _, g := range Grown(per[counts[0]], per[counts[len(counts)-1]], 0.05) {
		problems = append(problems, "requests per reconcile grow with the machines: "+g)
	}
	return problems
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
