// Command runcwrap is a runc wrapper for hosts whose capability bounding set lacks capabilities
// that privileged containers ask for (on the machines capwin's kind e2e is developed on,
// CAP_SYS_RESOURCE is missing, so `docker run --privileged`, and with it kind, fails with "unable
// to apply caps: operation not permitted").
//
// It removes every capability that is not in its own bounding set from the container's process
// (the bundle's config.json for create/run, the --process file for exec) and then runs the real
// runc with the same arguments. Where the bounding set is complete it changes nothing. It is
// registered as dockerd's default runtime (scripts/e2e-images.sh) and is the runc of the kind
// node's containerd, so privileged pods (kube-proxy) start as well.
//
// The real runc is $RUNCWRAP_RUNC, else the first "runc" on PATH that is not this program.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

func main() {
	runc, err := realRunc()
	if err != nil {
		fail(err)
	}
	if missing := missingCaps(); len(missing) > 0 {
		if file := specFile(os.Args[1:]); file != "" {
			if err := dropCaps(file, missing); err != nil {
				fail(err)
			}
		}
	}
	args := append([]string{runc}, os.Args[1:]...)
	fail(syscall.Exec(runc, args, os.Environ())) //nolint:gosec // G204: this wrapper runs the real runc, with the arguments it was given
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "runcwrap:", err)
	os.Exit(1)
}

// realRunc finds the runc this wrapper stands in for.
func realRunc() (string, error) {
	if p := os.Getenv("RUNCWRAP_RUNC"); p != "" {
		return p, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	self, _ = filepath.EvalSymlinks(self)
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, "runc")
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil || resolved == self {
			continue
		}
		if st, err := os.Stat(resolved); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 { //nolint:gosec // G703: a runc on PATH, as the shell finds it
			return p, nil
		}
	}
	return "", fmt.Errorf("no runc on PATH besides %s (set RUNCWRAP_RUNC)", self)
}

// globalValueFlags are runc's global flags that take a value as the next argument.
var globalValueFlags = map[string]bool{
	"--root": true, "--log": true, "--log-format": true, "--criu": true, "--rootless": true,
}

// specFile is the OCI file runc will read the process capabilities from: the bundle's
// config.json for create and run, the --process file for exec; "" for anything else.
func specFile(args []string) string {
	i := 0
	for i < len(args) && len(args[i]) > 0 && args[i][0] == '-' {
		if globalValueFlags[args[i]] {
			i++
		}
		i++
	}
	if i >= len(args) {
		return ""
	}
	cmd, rest := args[i], args[i+1:]
	switch cmd {
	case "create", "run":
		bundle := flagValue(rest, "--bundle", "-b")
		if bundle == "" {
			bundle = "."
		}
		return filepath.Join(bundle, "config.json")
	case "exec":
		return flagValue(rest, "--process", "-p")
	}
	return ""
}

// flagValue returns the value of a flag given as "--name value", "--name=value" or "-n value".
func flagValue(args []string, long, short string) string {
	for i, a := range args {
		switch {
		case (a == long || a == short) && i+1 < len(args):
			return args[i+1]
		case len(a) > len(long)+1 && a[:len(long)+1] == long+"=":
			return a[len(long)+1:]
		case len(a) > len(short)+1 && a[:len(short)+1] == short+"=":
			return a[len(short)+1:]
		}
	}
	return ""
}
