package manager

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestLeaseName(t *testing.T) {
	const name = "capwin-infrastructure-manager"
	long := strings.Repeat("x", 63)
	for _, tc := range []struct{ filter, want string }{
		{"", name + "-leader-election"},
		{"a", name + "-leader-election-a"},
		{"shard-1", name + "-leader-election-shard-1"},
		// Values a DNS name cannot carry as they are keep a hash, so they stay apart from the
		// value they are cleaned into.
		{"Shard_1", name + "-leader-election-shard-1-" + "db8ef1e1"},
		{"shard.1", name + "-leader-election-shard-1-" + "b031ace7"},
		{long, name + "-leader-election-" + long[:54] + "-" + "75220b47"},
	} {
		got := LeaseName(name, tc.filter)
		if got != tc.want {
			t.Errorf("LeaseName(%q) = %q, want %q", tc.filter, got, tc.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("LeaseName(%q) = %q is not a valid Lease name: %v", tc.filter, got, errs)
		}
	}
	if LeaseName(name, "a") == LeaseName(name, "A") {
		t.Error("the watch filters a and A share a Lease")
	}
}

// TestNewForConfigLease checks that the manager is built with the Lease of its watch filter (and
// its namespace): the options are read before the manager is made, which needs an apiserver.
func TestNewForConfigLease(t *testing.T) {
	o := NewOptions()
	o.LeaderElect, o.WatchFilterValue, o.LeaderElectNamespace = true, "b", "capwin-system"
	o.HealthAddr, o.Manager.DiagnosticsAddress, o.Manager.InsecureDiagnostics = "0", "0", true
	var got struct{ id, ns string }
	_, _ = NewForConfig(&rest.Config{Host: "https://127.0.0.1:1"}, o, clientgoscheme.Scheme, "capwin-test", false, func(opts *ctrl.Options) {
		got.id, got.ns = opts.LeaderElectionID, opts.LeaderElectionNamespace
	})
	if got.id != "capwin-test-leader-election-b" || got.ns != "capwin-system" {
		t.Errorf("leader election %s/%s, want capwin-system/capwin-test-leader-election-b", got.ns, got.id)
	}
}
