package rbac_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/capwin/capwin/test/framework/apicount"
)

// access is one authorization decision as RBAC sees a request (apicount.Access).
type access = apicount.Access

// accessOf derives the RBAC verb and resource of a request.
var accessOf = apicount.Of

// recorder sees every request one manager sends to the management apiserver (it wraps the
// transport under client-go's impersonation headers) and keeps what was allowed and denied, with
// the apiserver's message of the first denial of each access (RBAC's "cannot patch resource" or an
// admission plugin's reason).
type recorder struct {
	mu      sync.Mutex
	allowed map[access]int
	denied  map[access]int
	reasons map[access]string
}

func newRecorder() *recorder {
	return &recorder{allowed: map[access]int{}, denied: map[access]int{}, reasons: map[access]string{}}
}

// wrap is a transport.WrapperFunc for rest.Config.Wrap.
func (r *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		a := accessOf(req)
		var reason string
		if resp.StatusCode == http.StatusForbidden {
			reason, resp.Body = statusMessage(resp.Body)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		switch resp.StatusCode {
		case http.StatusForbidden:
			r.denied[a]++
			if _, ok := r.reasons[a]; !ok {
				r.reasons[a] = reason
			}
		case http.StatusUnauthorized:
			r.denied[access{Verb: "authenticate", Path: req.URL.Path}]++
		default: // 404 and 409 are answers past authorization, too
			r.allowed[a]++
			if a.Verb == "watch" && req.URL.Query().Get("sendInitialEvents") == "true" {
				a.Verb = "list" // a watch-list request (client-go's informers) lists, too
				r.allowed[a]++
			}
		}
		return resp, nil
	})
}

// statusMessage reads the message of a Status response body (JSON or protobuf) and returns a body
// to read again.
func statusMessage(body io.ReadCloser) (string, io.ReadCloser) {
	b, _ := io.ReadAll(body)
	_ = body.Close()
	var msg string
	if obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil); err == nil {
		if st, ok := obj.(*metav1.Status); ok {
			msg = st.Message
		}
	}
	return msg, io.NopCloser(bytes.NewReader(b))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// denials lists the denied accesses with their counts and first messages, sorted.
func (r *recorder) denials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for a, n := range r.denied {
		line := fmt.Sprintf("%s (%dx)", a, n)
		if m := r.reasons[a]; m != "" {
			line += ": " + m
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

// used reports whether any allowed request had this verb on group/resource.
func (r *recorder) used(verb, group, resource string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for a := range r.allowed {
		if a.Verb == verb && a.Group == group && a.Resource == resource {
			return true
		}
	}
	return false
}
