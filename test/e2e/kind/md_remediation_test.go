//go:build e2e

package kind

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	capie2e "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
)

// Cluster API's MachineDeployment remediation spec on the Windows MachineDeployment, with the
// windows-md-remediation flavor the suite makes from the windows flavor in the local repository
// (flavors_test.go): the spec patches the condition e2e.remediation.condition=False onto the
// Node of a Windows Machine, the MachineHealthCheck marks the Machine unhealthy, its MachineSet
// deletes it (Node drained, VM destroyed) and creates a new one, whose simulated guest joins
// with a healthy Node. Serial: one workload cluster at a time.
var _ = Describe("When remediating an unhealthy Windows Machine of the windows flavor", Serial, func() {
	capie2e.MachineDeploymentRemediationSpec(ctx, func() capie2e.MachineDeploymentRemediationSpecInput {
		writeWindowsMDRemediationFlavor(e2eConfig, clusterctlConfigPath)
		return capie2e.MachineDeploymentRemediationSpecInput{
			// A replacement Windows machine is a new VM, a new guest and a new Node.
			E2EConfig:              withDefaultInterval(e2eConfig, "md-remediation", "wait-machine-remediation", "15m", "10s"),
			ClusterctlConfigPath:   clusterctlConfigPath,
			BootstrapClusterProxy:  &statusThroughObjectProxy{ClusterProxy: bootstrapClusterProxy},
			ArtifactFolder:         artifactFolder,
			SkipCleanup:            skipCleanup,
			InfrastructureProvider: ptr.To(capwinProvider),
			Flavor:                 ptr.To(windowsMDRemediationFlavor),
		}
	})
})

// withDefaultInterval returns the e2e config, or where it has no interval for spec/key nor
// default/key, a copy with default/key set to interval.
func withDefaultInterval(config *clusterctl.E2EConfig, spec, key string, interval ...string) *clusterctl.E2EConfig {
	if config.GetIntervals(spec, key) != nil {
		return config
	}
	c := config.DeepCopy()
	if c.Intervals == nil {
		c.Intervals = map[string][]string{}
	}
	c.Intervals["default/"+key] = interval
	return c
}

// statusThroughObjectProxy is the management cluster's proxy whose workload cluster clients write
// status through the object itself. The workload clusters are Cluster API's in-memory API server,
// which serves no status subresource (no .../status routes: a status patch is a 404) and stores
// a patch of the object whole, status included; the remediation spec marks a Node unhealthy with
// a status patch (framework.PatchNodeCondition).
type statusThroughObjectProxy struct {
	framework.ClusterProxy
}

func (p *statusThroughObjectProxy) GetWorkloadCluster(ctx context.Context, namespace, name string, options ...framework.Option) framework.ClusterProxy {
	return &statusThroughObjectWorkload{ClusterProxy: p.ClusterProxy.GetWorkloadCluster(ctx, namespace, name, options...)}
}

type statusThroughObjectWorkload struct {
	framework.ClusterProxy
}

func (p *statusThroughObjectWorkload) GetClient() client.Client {
	return statusThroughObjectClient{Client: p.ClusterProxy.GetClient()}
}

type statusThroughObjectClient struct {
	client.Client
}

func (c statusThroughObjectClient) Status() client.SubResourceWriter {
	return statusThroughObjectWriter{SubResourceWriter: c.Client.Status(), c: c.Client}
}

// statusThroughObjectWriter updates and patches the object instead of its status subresource.
type statusThroughObjectWriter struct {
	client.SubResourceWriter
	c client.Client
}

func (w statusThroughObjectWriter) Update(ctx context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
	return w.c.Update(ctx, obj)
}

func (w statusThroughObjectWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, _ ...client.SubResourcePatchOption) error {
	return w.c.Patch(ctx, obj, patch)
}
