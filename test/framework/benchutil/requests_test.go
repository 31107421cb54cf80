package benchutil

import (
	"net/http/httptest"
	"testing"
)

func TestRequestKind(t *testing.T) {
	for _, c := range []struct{ method, path, verb, resource string }{
		{"GET", "/api/v1/namespaces/bench/secrets/win-kubeconfig", "get", "secrets"},
		{"GET", "/api/v1/namespaces/bench/secrets", "list", "secrets"},
		{"GET", "/api/v1/namespaces/bench/secrets?watch=true&resourceVersion=1", "watch", "secrets"},
		{"GET", "/api/v1/namespaces/bench", "get", "namespaces"},
		{"GET", "/api/v1/namespaces", "list", "namespaces"},
		{"GET", "/api/v1/nodes/n1", "get", "nodes"},
		{"POST", "/api/v1/namespaces/bench/events", "create", "events"},
		{"PATCH", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/bench/vcentermachines/m1/status", "patch", "vcentermachines/status"},
		{"PUT", "/apis/cluster.x-k8s.io/v1beta2/namespaces/bench/clusters/win/status", "update", "clusters/status"},
		{"DELETE", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/bench/vcentermachines", "deletecollection", "vcentermachines"},
		{"DELETE", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/bench/vcentermachines/m1", "delete", "vcentermachines"},
		{"GET", "/apis/infrastructure.cluster.x-k8s.io/v1beta1/vcenterclusteridentities", "list", "vcenterclusteridentities"},
		{"GET", "/apis", "get", "non-resource"},
		{"GET", "/healthz", "get", "non-resource"},
	} {
		verb, resource := RequestKind(httptest.NewRequest(c.method, c.path, nil))
		if verb != c.verb || resource != c.resource {
			t.Errorf("%s %s: got %s %s, want %s %s", c.method, c.path, verb, resource, c.verb, c.resource)
		}
	}
}

func TestCounts(t *testing.T) {
	got, err := Counts("100, 250,1000")
	if err != nil || len(got) != 3 || got[0] != 100 || got[1] != 250 || got[2] != 1000 {
		t.Fatalf("Counts: %v %v", got, err)
	}
	for _, bad := range []string{"", "0", "10,x", "-5"} {
		if _, err := Counts(bad); err == nil {
			t.Errorf("Counts(%q): no error", bad)
		}
	}
}
