// Package leakcheck measures what a churn test must leave as it found: goroutines and live heap.
package leakcheck

import (
	"runtime"
	"time"
)

// Settle waits (up to 5 s) for the goroutines of closed connections to end and returns the number
// of goroutines and the live heap after a collection.
func Settle() (goroutines int, heap uint64) {
	for range 50 {
		runtime.GC()
		goroutines = runtime.NumGoroutine()
		time.Sleep(100 * time.Millisecond)
		if runtime.NumGoroutine() == goroutines {
			break
		}
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return goroutines, ms.HeapAlloc
}
