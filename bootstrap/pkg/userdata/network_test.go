package userdata

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/internal/guestos"
	"github.com/capwin/capwin/internal/test/pscheck"
)

// TestNetworkStepReadsTheDocument reads the script's syntax tree: the network step looks for
// capwin's network document where the document's networkSource says (VMware Tools' info-get of its
// guestinfo key, else the file on the config drive) and applies it with the launcher's shared
// Set-Network; the step runs before anything that needs the network.
func TestNetworkStepReadsTheDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	g := NewWithT(t)
	calls, err := pscheck.Calls(filepath.Join("ps", "bootstrap.ps1"))
	g.Expect(err).NotTo(HaveOccurred())
	in := func(function, name string, args ...string) func(pscheck.Call) bool {
		return func(c pscheck.Call) bool {
			return c.Function == function && c.Name == name && slices.Equal(c.Args, args)
		}
	}
	for _, want := range []func(pscheck.Call) bool{
		func(c pscheck.Call) bool { // a native call is named by its whole expression
			return c.Function == "Get-NetworkDocument" && strings.HasPrefix(c.Name, "& $vmtoolsd ") &&
				slices.Equal(c.Args, []string{"'--cmd'", "('info-get ' + $source.guestinfoKey)", "2>$null"})
		},
		in("Step-Network", "Get-NetworkDocument"),
		in("Step-Network", "Set-Network", "$document"),
	} {
		_, i := pscheck.Find(calls, want)
		g.Expect(i).NotTo(Equal(-1))
	}
	_, file := pscheck.Find(calls, func(c pscheck.Call) bool {
		return c.Function == "Get-NetworkDocument" && c.Name == "[IO.File]::ReadAllText" && slices.Equal(c.Args, []string{"[IO.File]::ReadAllText($path)"})
	})
	g.Expect(file).NotTo(Equal(-1), "the config drive's file is read")

	steps := guestos.BootstrapSteps
	g.Expect(slices.Index(steps, "network")).To(Equal(1), "right after preflight")
	for _, later := range []string{"time", "domain", "downloads"} {
		g.Expect(slices.Index(steps, "network")).To(BeNumerically("<", slices.Index(steps, later)), "network before %s", later)
	}
}

// TestNetworkSourceInTheDocument: every rendered document names where the infrastructure provider
// puts the network document, and the script carries the shared Set-Network before its own code.
func TestNetworkSourceInTheDocument(t *testing.T) {
	g := NewWithT(t)
	for _, format := range []Format{FormatCloudConfig, FormatPowerShell} {
		u, doc := render(t, minimalInput(format))
		g.Expect(doc.NetworkSource).To(Equal(NetworkSource{GuestinfoKey: "guestinfo.capwin.network", VolumeLabel: "cidata", File: "capwin-network.json"}))
		network := strings.Index(string(u.Script), "function Set-Network")
		g.Expect(network).To(BeNumerically(">", 0))
		g.Expect(network).To(BeNumerically("<", strings.Index(string(u.Script), "function Step-Network")))
		g.Expect(string(u.Script)).To(HaveSuffix(guestos.NetworkScript() + bootstrapBody))
	}
}
