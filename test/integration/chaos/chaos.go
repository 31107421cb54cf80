// Package chaos runs capwin in the local harness (real apiservers, CAPI's controllers, vcsim or
// simulated Hyper-V hosts, simulated Windows guests) while faults are injected (the managers and
// the hypervisor's endpoint restart too), rolls the machines out from Windows Server 2022 to 2025
// halfway through, deletes everything, and checks the invariants a user relies on: every
// machine converges or says why not, no VM is created twice, nothing is left behind, no VM capwin
// did not create is touched, and a refused credential is not tried again and again. `make chaos` runs it (cmd/), TestChaosShort briefly.
package chaos

import (
	"time"

	"github.com/go-logr/logr"
)

// Rates of the faults. vSphere: the chance of each kind per call; Fail is the chance that a clone
// is sent so that its task fails. Hyper-V: Lose and Delay scaled
// per quarter second (a host loses one answer, or its jobs slow down); one host also hangs
// during the second quarter of the fault window and one has a full disk during the third.
type Rates struct {
	Delay, Drop, Lose, Expire, Fail float64
	MaxDelay                        time.Duration
}

// DefaultRates are the soak's rates.
var DefaultRates = Rates{Delay: 0.05, Drop: 0.01, Lose: 0.01, Expire: 0.005, Fail: 0.1, MaxDelay: 2 * time.Second}

// Config of one run on one provider.
type Config struct {
	// Provider is harness.VCenter or harness.HyperV.
	Provider string
	// Machines in the MachineDeployment that is rolled out.
	Machines int
	// Duration of the fault window; the rollout starts halfway.
	Duration time.Duration
	Seed     uint64
	Rates    Rates
	// Restarts of the managers (all of them, as a Pod restart or leader handover would) during
	// the window.
	Restarts int
	// SimRestarts of the hypervisor's endpoint during the rollout: vCenter's service, or a
	// Hyper-V host's WinRM service (one host after the other); Outage is how long the endpoint is
	// away each time (default 3s).
	SimRestarts int
	Outage      time.Duration
	// Converge bounds the wait for convergence after the faults and for the deletion.
	Converge time.Duration
	// Log receives the harness's own messages; ControllersLog is the file the controllers log
	// to (harness.LogControllers), searched for the run's credentials at the end.
	Log            logr.Logger
	ControllersLog string
}

// Report is what one run measured and the invariants it broke (Violations).
type Report struct {
	Provider string
	Machines int
	// Faults injected, by kind.
	Faults   map[string]int64
	Restarts int
	// Ready is the number of rolled-out machines Ready at the end; NotReady lists the others
	// with their VMProvisioned reason and message.
	Ready    int
	NotReady []string
	// Hostile is the condition of the machine that points at a VM capwin did not create.
	Hostile string
	// Duplicates lists owners seen with more than one VM (sampled every 2 s).
	Duplicates []string
	// Left after deleting the Clusters (LeakedRules: DRS anti-affinity rules, failure domain VM
	// groups and VM-Host rules on vCenter, VM roles of a Hyper-V failover cluster; LeakedTags: tag
	// attachments of the harness's vSphere tags, vCenter only).
	LeakedVMs, LeakedRules, LeakedTags, LeakedClaims, LeakedTokens int
	// DecoyChanges counts calls that would change a VM capwin did not create; DecoysLeft whether
	// every such VM still exists as it was.
	DecoyChanges int64
	DecoysLeft   bool
	// BadCluster is the HypervisorAvailable condition of the cluster whose credential is refused.
	BadCluster string
	// RefusedLogins of the bad credential, and the bound (1 per server).
	RefusedLogins, RefusedBound int64
	// Converged is the time from the last fault until every machine was Ready on the new image.
	Converged time.Duration
	// ToReadyP50 and ToReadyMax: Machine creation to Ready, over the machines of the run.
	ToReadyP50, ToReadyMax time.Duration
	Delete                 time.Duration
	// Credentials is the number of credentials the secret scan searched for (none may be found).
	Credentials int
	Violations  []string
}
