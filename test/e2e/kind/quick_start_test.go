//go:build e2e

package kind

import (
	. "github.com/onsi/ginkgo/v2"
	"k8s.io/utils/ptr"

	capie2e "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
)

// Cluster API's quick start with the windows flavor: a KubeadmControlPlane (Linux) and the
// Windows MachineDeployment, on vcsim. The spec waits for the Cluster to be Available and every
// Machine (both Windows ones included) to be Ready, i.e. to have a linked, Ready Node. A joined
// Machine and one that never joins are then diagnosed with render logs, through VMware Tools'
// guest operations (checkRenderLogs).
var _ = Describe("When following the Cluster API quick start with the windows flavor", func() {
	capie2e.QuickStartSpec(ctx, func() capie2e.QuickStartSpecInput {
		return capie2e.QuickStartSpecInput{
			E2EConfig:                e2eConfig,
			ClusterctlConfigPath:     clusterctlConfigPath,
			BootstrapClusterProxy:    bootstrapClusterProxy,
			ArtifactFolder:           artifactFolder,
			SkipCleanup:              skipCleanup,
			InfrastructureProvider:   ptr.To("capwin"),
			Flavor:                   ptr.To("windows"),
			ControlPlaneMachineCount: ptr.To[int64](1),
			WorkerMachineCount:       ptr.To[int64](2),
			PostMachinesProvisioned: func(proxy framework.ClusterProxy, namespace, clusterName string) {
				verifyWindowsWorkers(ctx, proxy, namespace, clusterName, e2eConfig.MustGetVariable(windowsBuild))
				checkRenderLogs(ctx, proxy, namespace, clusterName)
			},
		}
	})
})
