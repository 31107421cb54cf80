package benchutil

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CPU is the CPU time (user + system) this process has used so far; child processes are not
// included.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ResetPeakRSS restarts the kernel's peak RSS (VmHWM) from the current RSS; false when the
// kernel does not allow it (the peak is then the process's lifetime peak).
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// RSS reads the process's resident set and its peak from /proc, in bytes.
func RSS() (rss, peak int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak
}

// Memory reads the process's resident set and its peak from /proc, as text.
func Memory() (rss, peak string) {
	r, p := RSS()
	return MiB(r), MiB(p)
}

// MiB formats bytes as MiB.
func MiB(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

const heapMetric = "/memory/classes/heap/objects:bytes"

// Heap is the Go heap held by objects (live and not yet swept), in bytes.
func Heap() int64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()) //nolint:gosec // G115: a heap size in bytes, far below 2^63
}

// LiveHeap collects garbage first, then reads Heap.
func LiveHeap() int64 {
	runtime.GC()
	return Heap()
}

// HeapPeak samples Heap every interval until stopped and returns the largest value seen.
type HeapPeak struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak int64
}

// StartHeapPeak starts sampling.
func StartHeapPeak(interval time.Duration) *HeapPeak {
	h := &HeapPeak{stop: make(chan struct{}), peak: Heap()}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.peak = max(h.peak, Heap())
			}
		}
	}()
	return h
}

// Stop ends sampling and returns the peak.
func (h *HeapPeak) Stop() int64 {
	close(h.stop)
	h.wg.Wait()
	return max(h.peak, Heap())
}

// SettledGoroutines waits until the goroutine count stays the same for a second (at most
// limit) and returns it.
func SettledGoroutines(limit time.Duration) int {
	n, stable := runtime.NumGoroutine(), time.Now()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if m := runtime.NumGoroutine(); m != n {
			n, stable = m, time.Now()
		} else if time.Since(stable) >= time.Second {
			break
		}
	}
	return n
}
