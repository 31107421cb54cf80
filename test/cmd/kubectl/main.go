// Command kubectl is kubectl, built from k8s.io/kubectl at the version of go.mod: make kubectl
// (stamped with that version) for a reader without one, and the doc test
// (test/integration/doctest), which runs the documented kubectl commands against a real API server.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
