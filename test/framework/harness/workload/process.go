package workload

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// withDeathSignal returns an executable for envtest to run in place of binary: a script that
// execs binary under `setpriv --pdeathsig KILL`, so etcd and kube-apiserver (which envtest
// starts without a parent-death signal) die with the test binary even when it panics on a
// timeout. Without setpriv (util-linux) it returns binary itself.
func withDeathSignal(dir, binary string) (string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return binary, nil
	}
	script := filepath.Join(dir, filepath.Base(binary)+".sh")
	body := fmt.Sprintf("#!/bin/sh\nexec %q --pdeathsig KILL -- %q \"$@\"\n", setpriv, binary)
	return script, os.WriteFile(script, []byte(body), 0o700) //nolint:gosec // G306: a script envtest executes: owner-only and executable
}
