//go:build e2e

// Package kind is capwin's end-to-end test on a kind management cluster with Cluster API's test
// framework: `clusterctl init` from a local repository of the freshly built providers, vcsim
// and the guest simulator (test/e2e/kind/sim) in the management cluster, then Cluster API's
// quick start with the windows flavor and a rollout of the Windows MachineDeployment to a new
// Windows Server template. See README.md for what is real and what is simulated.
package kind

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/logs"
	logsv1 "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/bootstrap"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/cluster-api/test/framework/ginkgoextensions"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// Test suite flags (the same as Cluster API's e2e suite).
var (
	configPath         string
	artifactFolder     string
	skipCleanup        bool
	useExistingCluster bool
	alsoLogToFile      bool
	logOptions         = logs.NewOptions()
)

// Test suite state, shared by the specs.
var (
	ctx                       = ctrl.SetupSignalHandler()
	watchesCtx, cancelWatches = context.WithCancel(ctx)

	e2eConfig                *clusterctl.E2EConfig
	clusterctlConfigPath     string
	bootstrapClusterProvider bootstrap.ClusterProvider
	// bootstrapClusterProxy reaches the workload clusters through the simulator pod (see
	// simClusterProxy): their endpoint is a ClusterIP of the management cluster.
	bootstrapClusterProxy framework.ClusterProxy
)

func init() {
	flag.StringVar(&configPath, "e2e.config", "", "path to the e2e config file")
	flag.StringVar(&artifactFolder, "e2e.artifacts-folder", "", "folder where e2e test artifacts are stored")
	flag.BoolVar(&alsoLogToFile, "e2e.also-log-to-file", true, "if true, ginkgo logs are also written to ginkgo-log.txt in the artifacts folder (with timestamps)")
	flag.BoolVar(&skipCleanup, "e2e.skip-resource-cleanup", false, "if true, the resources created by the tests and the kind cluster are kept")
	flag.BoolVar(&useExistingCluster, "e2e.use-existing-cluster", false, "if true, the test uses the current cluster (KUBECONFIG) instead of creating a kind cluster")
	logsv1.AddGoFlags(logOptions, flag.CommandLine)
}

func TestE2E(t *testing.T) {
	g := NewWithT(t)
	g.Expect(logsv1.ValidateAndApply(logOptions, nil)).To(Succeed())
	ctrl.SetLogger(klog.Background())
	if prowArtifactFolder, ok := os.LookupEnv("ARTIFACTS"); ok {
		artifactFolder = prowArtifactFolder
	}
	g.Expect(artifactFolder).ToNot(BeEmpty(), "-e2e.artifacts-folder is required")
	g.Expect(os.MkdirAll(artifactFolder, 0o755)).To(Succeed(), "can't create -e2e.artifacts-folder %q", artifactFolder)

	RegisterFailHandler(Fail)
	if alsoLogToFile {
		w, err := ginkgoextensions.EnableFileLogging(filepath.Join(artifactFolder, "ginkgo-log.txt"))
		g.Expect(err).ToNot(HaveOccurred())
		defer func() { _ = w.Close() }()
	}
	RunSpecs(t, "capwin-e2e")
}

// The local clusterctl repository, the management cluster, vcsim and the simulator are created
// once and shared by all specs (and all ginkgo processes).
var _ = SynchronizedBeforeSuite(func() []byte {
	Expect(configPath).To(BeAnExistingFile(), "-e2e.config must be an existing file")
	if !useExistingCluster {
		requireDocker()
	}

	Byf("Loading the e2e test configuration from %q", configPath)
	e2eConfig = loadE2EConfig(configPath)

	Byf("Creating a clusterctl local repository in %q", artifactFolder)
	clusterctlConfigPath = createClusterctlLocalRepository(e2eConfig, configPath, filepath.Join(artifactFolder, "repository"))

	By("Setting up the management cluster")
	var proxy framework.ClusterProxy
	bootstrapClusterProvider, proxy = setupBootstrapCluster(e2eConfig, initScheme(), useExistingCluster)

	By("Initializing the management cluster with clusterctl init")
	initBootstrapCluster(proxy, e2eConfig, clusterctlConfigPath, artifactFolder)
	startSecretScan(proxy)

	By("Deploying vcsim and the guest simulator into the management cluster")
	deploySimulators(ctx, proxy, e2eConfig, configPath)

	return []byte(strings.Join([]string{artifactFolder, configPath, clusterctlConfigPath, proxy.GetKubeconfigPath()}, ","))
}, func(data []byte) {
	parts := strings.Split(string(data), ",")
	Expect(parts).To(HaveLen(4))
	artifactFolder, configPath, clusterctlConfigPath = parts[0], parts[1], parts[2]
	e2eConfig = loadE2EConfig(configPath)
	bootstrapClusterProxy = newSimClusterProxy(framework.NewClusterProxy("bootstrap", parts[3], initScheme()), e2eConfig)
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	defer tearDown() // also when the secret scan fails
	if bootstrapClusterProxy != nil {
		By("Dumping the simulator's and vcsim's logs")
		dumpSimulatorLogs(ctx, bootstrapClusterProxy, e2eConfig, artifactFolder)
		if secretScan != nil {
			By("Looking for the run's credentials in capwin's logs, events, objects and metrics")
			scanSecrets(bootstrapClusterProxy)
		}
	}
})

// tearDown stops the log watchers and deletes the management cluster (unless
// -e2e.skip-resource-cleanup).
func tearDown() {
	cancelWatches()
	if skipCleanup {
		return
	}
	By("Tearing down the management cluster")
	if bootstrapClusterProxy != nil {
		bootstrapClusterProxy.Dispose(ctx)
	}
	if bootstrapClusterProvider != nil {
		bootstrapClusterProvider.Dispose(ctx)
	}
}

// requireDocker fails at once, with the reason, where kind cannot run.
func requireDocker() {
	out, err := exec.CommandContext(ctx, "docker", "info").CombinedOutput()
	Expect(err).ToNot(HaveOccurred(),
		"this e2e test needs a Docker engine for kind; none found (docker info failed: %v). "+
			"The local end-to-end harness runs without Docker: make test / make demo.\n%s", err, out)
}

func initScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	framework.TryAddDefaultSchemes(s)
	Expect(clientgoscheme.AddToScheme(s)).To(Succeed()) // NetworkPolicies among others
	Expect(apiextensionsv1.AddToScheme(s)).To(Succeed())
	Expect(infrav1.AddToScheme(s)).To(Succeed())
	Expect(bootstrapv1.AddToScheme(s)).To(Succeed())
	return s
}

func loadE2EConfig(path string) *clusterctl.E2EConfig {
	config := clusterctl.LoadE2EConfig(ctx, clusterctl.LoadE2EConfigInput{ConfigPath: path})
	Expect(config).ToNot(BeNil(), "failed to load the e2e config from %s", path)
	return config
}

func setupBootstrapCluster(config *clusterctl.E2EConfig, scheme *runtime.Scheme, useExisting bool) (bootstrap.ClusterProvider, framework.ClusterProxy) {
	var provider bootstrap.ClusterProvider
	kubeconfigPath := ""
	if !useExisting {
		input := bootstrap.CreateKindBootstrapClusterAndLoadImagesInput{
			Name:      config.ManagementClusterName,
			Images:    config.Images,
			IPFamily:  config.MustGetVariable(ipFamily),
			LogFolder: filepath.Join(artifactFolder, "kind"),
		}
		// The node image built here (make e2e-images), else kind's for the management version.
		if config.HasVariable(kindNodeImage) && config.MustGetVariable(kindNodeImage) != "" {
			input.CustomNodeImage = config.MustGetVariable(kindNodeImage)
		} else {
			input.KubernetesVersion = config.MustGetVariable(kubernetesVersionManagement)
		}
		provider = bootstrap.CreateKindBootstrapClusterAndLoadImages(ctx, input)
		Expect(provider).ToNot(BeNil(), "failed to create the kind cluster")
		kubeconfigPath = provider.GetKubeconfigPath()
		Expect(kubeconfigPath).To(BeAnExistingFile(), "failed to get the kind cluster's kubeconfig")
	}
	proxy := framework.NewClusterProxy("bootstrap", kubeconfigPath, scheme)
	Expect(proxy).ToNot(BeNil(), "failed to get a proxy for the management cluster")
	return provider, proxy
}

// initBootstrapCluster runs clusterctl init with Cluster API, kubeadm (bootstrap and control
// plane: the Linux control plane of the windows flavor) and capwin's two providers.
func initBootstrapCluster(proxy framework.ClusterProxy, config *clusterctl.E2EConfig, clusterctlConfig, artifacts string) {
	clusterctl.InitManagementClusterAndWatchControllerLogs(watchesCtx, clusterctl.InitManagementClusterAndWatchControllerLogsInput{
		ClusterProxy:            proxy,
		ClusterctlConfigPath:    clusterctlConfig,
		BootstrapProviders:      append([]string{"kubeadm"}, additionalProviderNames(configPath, "BootstrapProvider")...),
		InfrastructureProviders: config.InfrastructureProviders(),
		LogFolder:               filepath.Join(artifacts, "clusters", proxy.GetName()),
	}, config.GetIntervals(proxy.GetName(), "wait-controllers")...)
}

// Byf is By with a format.
func Byf(format string, a ...any) { By(fmt.Sprintf(format, a...)) }
