package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version is the release version: make release-render sets it with
// -ldflags "-X main.version=vX.Y.Z".
var version = "dev"

// errNoArgs is run's answer to an empty command line; main prints the usage with it.
var errNoArgs = errors.New("no arguments: give the preview's flags or a command")

const usageHead = `render previews a WindowsConfig's user data offline, prints a Machine's story from the
management cluster, gathers the logs of Windows nodes, and checks a workload cluster's Windows
images before a Windows Server upgrade, and checks a Windows node image.

Usage:
  render -f FILE --api-server HOST:PORT (--ca-file FILE | --ca-hash sha256:...) [flags]
        print the user data a node would receive (offline; flags below)
  render diagnostics [--kubeconfig FILE] [-n NAMESPACE] [--events N] MACHINE
        print a Machine's story from the management cluster (render diagnostics -h)
  render preflight --target BUILD [--kubeconfig FILE] [-n NAMESPACE] CLUSTER
        list the Windows workloads that will not start on nodes of a new Windows build
        (render preflight -h)
  render logs [--kubeconfig FILE] [-n NAMESPACE] [-o FILE] (MACHINE | --machine-deployment NAME | --cluster NAME)
        gather the stories and node logs of Machines into one .tar.gz (render logs -h)
  render image-check [--kubeconfig FILE] [-n NAMESPACE] --machine-template NAME [--image IMAGE] CLUSTER
        boot one machine from a Windows image, list what it has for a node, delete it
        (render image-check -h)
  render version
        print render's version
  render help
        print this help

Flags of the preview:
`

// printUsage writes the usage of render: both forms, then the preview's flags.
func printUsage(w io.Writer) error {
	var b strings.Builder
	b.WriteString(usageHead)
	fs := previewFlags(&previewOptions{})
	fs.SetOutput(&b)
	fs.PrintDefaults()
	_, err := io.WriteString(w, b.String())
	return err
}

// flagError is what run returns for an error of fs.Parse: for -h or --help it prints the usage
// on stdout and returns flag.ErrHelp; any other error gets the command that prints the usage.
func flagError(err error, stdout io.Writer, usage func(io.Writer) error, help string) error {
	if errors.Is(err, flag.ErrHelp) {
		if err := usage(stdout); err != nil {
			return err
		}
		return flag.ErrHelp
	}
	return fmt.Errorf("%w (%s for usage)", err, help)
}

// exitStatus reports run's error on stderr and returns the exit status: 0 for success and for
// help (flag.ErrHelp: the usage is already on stdout), 1 for an error, after the usage when
// there were no arguments.
func exitStatus(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errNoArgs):
		_ = printUsage(stderr) // stderr is the last place to report to
		_, _ = fmt.Fprintln(stderr)
	}
	_, _ = fmt.Fprintln(stderr, "render:", err)
	return 1
}

// versionString is version, and the commit render was built from when the build recorded it.
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return formatVersion(version, bi)
}

func formatVersion(v string, bi *debug.BuildInfo) string {
	if bi == nil {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return v
	}
	if modified == "true" {
		rev += ", modified"
	}
	return fmt.Sprintf("%s (commit %s)", v, rev)
}

// writeUsage writes a command's usage line, its description and its flags.
func writeUsage(w io.Writer, usage, description string, fs *flag.FlagSet) error {
	var b strings.Builder
	b.WriteString(usage + "\n\n" + strings.TrimSpace(description) + "\n\nFlags:\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	_, err := io.WriteString(w, b.String())
	return err
}

// managementFlags are the flags of the commands that read the management cluster.
func managementFlags(fs *flag.FlagSet, kubeconfig, namespace *string, of string) {
	fs.StringVar(kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(namespace, "n", "", "namespace of the "+of+" (default: the kubeconfig context's)")
	fs.StringVar(namespace, "namespace", "", "same as -n")
}
