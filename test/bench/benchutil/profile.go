package benchutil

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// CPUProfile starts writing this process's CPU profile to path (nothing when path is empty);
// the returned function stops it and closes the file.
func CPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// HeapProfile writes the live heap (after a GC) to path; nothing when path is empty.
func HeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// goroutineDump writes the goroutines (grouped by stack, pprof's text form) to the file named
// by $BENCH_GOROUTINES with the suffix given; nothing when the variable is unset.
func goroutineDump(suffix string) error {
	path := os.Getenv("BENCH_GOROUTINES")
	if path == "" {
		return nil
	}
	f, err := os.Create(path + suffix)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("goroutine").WriteTo(f, 1)
}
