package benchutil

import (
	"errors"
	"os"
	"runtime"
	"runtime/pprof"
)

// CPUProfile starts writing this process's CPU profile to path (nothing when path is empty);
// the returned function stops it and closes the file.
func CPUProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error { pprof.StopCPUProfile(); return f.Close() }, nil
}

// Profiled runs f while writing this process's CPU profile to path (just f when path is empty).
func Profiled(path string, f func() error) error {
	stop, err := CPUProfile(path)
	if err != nil {
		return err
	}
	err = f()
	if serr := stop(); err == nil {
		err = serr
	}
	return err
}

// HeapProfile writes the live heap (after a GC) to path; nothing when path is empty.
func HeapProfile(path string) error {
	if path == "" {
		return nil
	}
	runtime.GC()
	return writeProfile(path, "heap", 0)
}

// goroutineDump writes the goroutines (grouped by stack, pprof's text form) to the file named
// by $BENCH_GOROUTINES with the suffix given; nothing when the variable is unset.
func goroutineDump(suffix string) error {
	path := os.Getenv("BENCH_GOROUTINES")
	if path == "" {
		return nil
	}
	return writeProfile(path+suffix, "goroutine", 1)
}

// writeProfile writes the named pprof profile to path, in the form debug selects.
func writeProfile(path, name string, debug int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, debug); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}
