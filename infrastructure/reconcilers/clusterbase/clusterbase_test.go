package clusterbase

import (
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestClusterEvents: an infrastructure cluster is reconciled when its Cluster is paused too, so
// its Paused condition turns True while clusterctl move holds the Cluster (regression: only
// unpause events were watched, and VCenterCluster kept Paused=False during a move).
func TestClusterEvents(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	p := clusterEvents(scheme, logr.Discard())
	cluster := func(paused bool, generation int64) *clusterv1.Cluster {
		return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Generation: generation},
			Spec: clusterv1.ClusterSpec{Paused: ptr.To(paused)}}
	}
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"created unpaused", p.Create(event.CreateEvent{Object: cluster(false, 1)}), true},
		{"created paused", p.Create(event.CreateEvent{Object: cluster(true, 1)}), false},
		{"paused (clusterctl move starts)", p.Update(event.UpdateEvent{ObjectOld: cluster(false, 1), ObjectNew: cluster(true, 2)}), true},
		{"unpaused (clusterctl move ends)", p.Update(event.UpdateEvent{ObjectOld: cluster(true, 1), ObjectNew: cluster(false, 2)}), true},
		{"other change", p.Update(event.UpdateEvent{ObjectOld: cluster(false, 1), ObjectNew: cluster(false, 2)}), false},
		{"deleted", p.Delete(event.DeleteEvent{Object: cluster(false, 1)}), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: reconcile=%t, want %t", tc.name, tc.got, tc.want)
		}
	}
}
