// Package feature holds the feature gates of both capwin managers (--feature-gates).
package feature

import (
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/featuregate"
)

const (
	// PriorityQueue makes controllers use controller-runtime's priority queue, which serves
	// user-triggered changes before periodic resyncs on large management clusters.
	// alpha: v0.1
	PriorityQueue featuregate.Feature = "PriorityQueue"
)

var (
	// MutableGates is the mutable gate set; main adds it to the flag set.
	MutableGates featuregate.MutableFeatureGate = featuregate.NewFeatureGate()
	// Gates is the read-only view used by the code.
	Gates featuregate.FeatureGate = MutableGates
)

func init() {
	runtime.Must(MutableGates.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		PriorityQueue: {Default: false, PreRelease: featuregate.Alpha},
	}))
}
