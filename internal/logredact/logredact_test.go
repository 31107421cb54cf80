package logredact

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

const password = "Vc-pw-0a1b2c3d4e"

// apiServer answers every request with a Secret holding password.
func apiServer(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"vcenter","namespace":"ns"},"data":{"password":"` +
			base64.StdEncoding.EncodeToString([]byte(password)) + `"}}`))
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func leaks(out string) bool {
	return strings.Contains(out, password) || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(password)))
}

// TestContextLoggerDropsBodies: client-go logs a Secret's body at -v=8 and above with the
// logger of the request's context (a reconcile's); wrapped, the body is dropped and the rest of
// the message stays.
func TestContextLoggerDropsBodies(t *testing.T) {
	cs := apiServer(t)
	get := func(wrap bool) string {
		var buf bytes.Buffer
		l := funcr.New(func(prefix, args string) { buf.WriteString(prefix + " " + args + "\n") }, funcr.Options{Verbosity: 10})
		if wrap {
			l = Logger(l)
		}
		if _, err := cs.CoreV1().Secrets("ns").Get(klog.NewContext(context.Background(), l), "vcenter", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if out := get(false); !leaks(out) {
		t.Fatalf("client-go no longer logs bodies at V(10); this package may not be needed:\n%s", out)
	}
	out := get(true)
	if leaks(out) {
		t.Fatalf("the body is still logged:\n%s", out)
	}
	for _, want := range []string{`"Response Body"`, Omitted} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

// TestKlogFilterDropsBodies: without a logger in the context client-go logs through klog itself
// (the text format); Apply's filter drops the body there.
func TestKlogFilterDropsBodies(t *testing.T) {
	cs := apiServer(t)
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	for k, v := range map[string]string{"v": "10", "logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := fs.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	klog.SetOutput(&buf)
	t.Cleanup(func() {
		klog.SetLogFilter(nil)
		_ = fs.Set("v", "0")
	})
	get := func() string {
		buf.Reset()
		if _, err := cs.CoreV1().Secrets("ns").Get(context.Background(), "vcenter", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		klog.Flush()
		return buf.String()
	}
	if out := get(); !leaks(out) {
		t.Fatalf("klog did not get the body at -v=10:\n%s", out)
	}
	Apply("text")
	if out := get(); leaks(out) || !strings.Contains(out, Omitted) {
		t.Fatalf("the body is still logged:\n%s", out)
	}
}

// TestJSONLoggerDropsBodies: with the json format klog hands its logger to client-go as is;
// Apply wraps it.
func TestJSONLoggerDropsBodies(t *testing.T) {
	cs := apiServer(t)
	var buf bytes.Buffer
	klog.SetLoggerWithOptions(funcr.New(func(prefix, args string) { buf.WriteString(prefix + " " + args + "\n") },
		funcr.Options{Verbosity: 10}), klog.ContextualLogger(true))
	t.Cleanup(func() { klog.ClearLogger(); klog.SetLogFilter(nil) })
	Apply("json")
	if _, err := cs.CoreV1().Secrets("ns").Get(context.Background(), "vcenter", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); leaks(out) || !strings.Contains(out, Omitted) {
		t.Fatalf("the body is still logged:\n%s", out)
	}
}
