//go:build e2e

package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/util"
)

// SpecInput is what this suite's own specs take: the suite's e2e config, clusterctl config,
// management cluster and artifacts folder, and the flavor and number of Windows workers of the
// cluster they create.
type SpecInput struct {
	E2EConfig             *clusterctl.E2EConfig
	ClusterctlConfigPath  string
	BootstrapClusterProxy framework.ClusterProxy
	ArtifactFolder        string
	SkipCleanup           bool
	Flavor                string
	WorkerMachineCount    int64
}

// suiteInput is the SpecInput of the suite's management cluster and configuration.
func suiteInput(flavor string, workers int64) SpecInput {
	return SpecInput{E2EConfig: e2eConfig, ClusterctlConfigPath: clusterctlConfigPath, BootstrapClusterProxy: bootstrapClusterProxy,
		ArtifactFolder: artifactFolder, SkipCleanup: skipCleanup, Flavor: flavor, WorkerMachineCount: workers}
}

// specEnv is what one of this suite's own specs keeps from its BeforeEach to its AfterEach: its
// namespace, the namespace's event watch and the cluster it created.
type specEnv struct {
	name             string
	config           *clusterctl.E2EConfig
	clusterctlConfig string
	proxy            framework.ClusterProxy
	artifacts        string
	namespace        *corev1.Namespace
	cancelWatches    context.CancelFunc
	cluster          *clusterctl.ApplyClusterTemplateAndWaitResult
}

// newSpecEnv checks what every spec needs (and the e2e config variables the spec names) and
// creates the spec's namespace.
func newSpecEnv(ctx context.Context, name string, in SpecInput, variables ...string) *specEnv {
	config, clusterctlConfig, proxy, artifacts := in.E2EConfig, in.ClusterctlConfigPath, in.BootstrapClusterProxy, in.ArtifactFolder
	Expect(config).ToNot(BeNil())
	Expect(clusterctlConfig).To(BeAnExistingFile())
	Expect(proxy).ToNot(BeNil())
	Expect(os.MkdirAll(artifacts, 0o750)).To(Succeed())
	for _, v := range append([]string{kubernetesVersion}, variables...) {
		Expect(config.HasVariable(v)).To(BeTrue(), "the e2e config needs %s", v)
	}
	e := &specEnv{name: name, config: config, clusterctlConfig: clusterctlConfig, proxy: proxy, artifacts: artifacts,
		cluster: new(clusterctl.ApplyClusterTemplateAndWaitResult)}
	e.namespace, e.cancelWatches = framework.SetupSpecNamespace(ctx, name, proxy, artifacts, nil)
	return e
}

// logFolder is where clusterctl's and the controllers' logs of the management cluster go.
func (e *specEnv) logFolder() string {
	return filepath.Join(e.artifacts, "clusters", e.proxy.GetName())
}

// createCluster creates a cluster with one control plane machine and workers Windows workers from
// the flavor of provider (capwin, or capwin:<version>), on Kubernetes version (""
// KUBERNETES_VERSION), and waits for it; it returns its name.
func (e *specEnv) createCluster(ctx context.Context, provider, flavor, version string, variables map[string]string, workers int64) string {
	if version == "" {
		version = e.config.MustGetVariable(kubernetesVersion)
	}
	clusterName := fmt.Sprintf("%s-%s", e.name, util.RandomString(6))
	clusterctl.ApplyClusterTemplateAndWait(ctx, clusterctl.ApplyClusterTemplateAndWaitInput{
		ClusterProxy: e.proxy,
		ConfigCluster: clusterctl.ConfigClusterInput{
			LogFolder:                e.logFolder(),
			ClusterctlConfigPath:     e.clusterctlConfig,
			ClusterctlVariables:      variables,
			KubeconfigPath:           e.proxy.GetKubeconfigPath(),
			InfrastructureProvider:   provider,
			Flavor:                   flavor,
			Namespace:                e.namespace.Name,
			ClusterName:              clusterName,
			KubernetesVersion:        version,
			ControlPlaneMachineCount: ptr.To[int64](1),
			WorkerMachineCount:       ptr.To(workers),
		},
		WaitForClusterIntervals:      e.config.GetIntervals(e.name, "wait-cluster"),
		WaitForControlPlaneIntervals: e.config.GetIntervals(e.name, "wait-control-plane"),
		WaitForMachineDeployments:    e.config.GetIntervals(e.name, "wait-worker-nodes"),
	}, e.cluster)
	return clusterName
}

// cleanUp dumps the spec's resources and deletes its cluster and namespace (unless skipCleanup).
func (e *specEnv) cleanUp(ctx context.Context, skipCleanup bool) {
	if e == nil {
		return
	}
	if e.cluster.Cluster == nil { // failed before the cluster existed
		e.cancelWatches()
		return
	}
	framework.DumpSpecResourcesAndCleanup(ctx, e.name, e.proxy, e.clusterctlConfig, e.artifacts,
		e.namespace, e.cancelWatches, e.cluster.Cluster, e.config.GetIntervals, skipCleanup)
}
