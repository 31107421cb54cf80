package hypervsim

import "strings"

// volume is the files of one disk the simulator models: a host's own, or a failover cluster's
// shared volumes, all keyed by lower-case path.
type volume struct {
	files  map[string]int64  // path -> size
	drives map[string][]byte // config drive contents by path
	vhds   map[string]VHD    // data disk files by path
}

func newVolume() *volume {
	return &volume{files: map[string]int64{}, drives: map[string][]byte{}, vhds: map[string]VHD{}}
}

func (v *volume) delete(p string) {
	delete(v.files, p)
	delete(v.drives, p)
	delete(v.vhds, p)
}

// csvRoot is where Windows mounts a failover cluster's Cluster Shared Volumes on every node.
const csvRoot = `c:\clusterstorage\`

// vol is the volume a path is on: the cluster's shared volumes for a node's C:\ClusterStorage
// paths, else the host's own disks.
func (h *Host) vol(path string) *volume {
	if h.csv != nil && strings.HasPrefix(strings.ToLower(path), csvRoot) {
		return h.csv
	}
	return h.local
}

// volumes are the volumes the host sees.
func (h *Host) volumes() []*volume {
	if h.csv != nil {
		return []*volume{h.local, h.csv}
	}
	return []*volume{h.local}
}
