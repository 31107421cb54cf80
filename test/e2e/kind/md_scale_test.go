//go:build e2e

package kind

import (
	. "github.com/onsi/ginkgo/v2"
	"k8s.io/utils/ptr"

	capie2e "sigs.k8s.io/cluster-api/test/e2e"
)

// Cluster API's MachineDeployment scale spec on the windows flavor's only MachineDeployment, the
// Windows one: a cluster with one Windows worker, scaled out to 3 (every Machine gets a linked
// Node: each new VM on vcsim boots a simulated Windows guest that joins), back to 1 (Machines
// deleted, Nodes drained, VMs destroyed), then the MachineDeployment deleted in the foreground.
// Serial: one workload cluster at a time (the control plane endpoint's port is shared).
var _ = Describe("When scaling the Windows MachineDeployment of the windows flavor", Serial, func() {
	capie2e.MachineDeploymentScaleSpec(ctx, func() capie2e.MachineDeploymentScaleSpecInput {
		return capie2e.MachineDeploymentScaleSpecInput{
			E2EConfig:              e2eConfig,
			ClusterctlConfigPath:   clusterctlConfigPath,
			BootstrapClusterProxy:  bootstrapClusterProxy,
			ArtifactFolder:         artifactFolder,
			SkipCleanup:            skipCleanup,
			InfrastructureProvider: ptr.To(capwinProvider),
			Flavor:                 "windows",
		}
	})
})
