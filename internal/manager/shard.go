package manager

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/cluster-api/util/labels"
)

// InShard reports whether a manager of the watch filter acts on o: every object when the filter
// is empty, else only those whose cluster.x-k8s.io/watch-filter label has its value. The
// watches already filter by the label; a reconciler checks again because a watch on a related
// object (a Machine, a Cluster) enqueues by that object's label, and the object itself may be
// labelled for another shard (a cluster half moved between shards).
func InShard(o metav1.Object, watchFilter string) bool {
	return watchFilter == "" || labels.HasWatchLabel(o, watchFilter)
}
