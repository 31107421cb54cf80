//go:build e2e

package kind

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	inmemoryproxy "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/server/proxy"
)

// Names of e2e config variables and objects of test/e2e/data/simulators.yaml.
const (
	simulatorsManifest  = "SIMULATORS_MANIFEST"  // path of the manifest, relative to the e2e config
	simulatorsNamespace = "CAPWIN_E2E_NAMESPACE" // where vcsim and the simulator run
	simDeployment       = "capwin-e2e-sim"
	vcsimDeployment     = "vcsim"
	simPodLabel         = "app.kubernetes.io/name"
	hypervAcceptScripts = "HYPERV_ACCEPT_SCRIPTS" // another release's Hyper-V scripts the simulated hosts run
)

// deploySimulators applies test/e2e/data/simulators.yaml with the e2e config's variables
// substituted (so template names, vcsim credentials and the control plane endpoint are written
// down once, in the config) and waits until vcsim answers and the simulator has created the
// templates (its readiness).
func deploySimulators(ctx context.Context, proxy framework.ClusterProxy, config *clusterctl.E2EConfig, configFile string) {
	path := config.MustGetVariable(simulatorsManifest)
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(configFile), path)
	}
	raw, err := os.ReadFile(path) //nolint:gosec // named by the e2e config
	Expect(err).ToNot(HaveOccurred(), "read %s", path)
	manifest, err := yamlprocessor.NewSimpleProcessor().Process(raw, func(name string) (string, error) {
		if !config.HasVariable(name) {
			return "", fmt.Errorf("variable %s is not in the e2e config", name)
		}
		return config.MustGetVariable(name), nil
	})
	Expect(err).ToNot(HaveOccurred(), "substitute the e2e config's variables into %s", path)
	ns := config.MustGetVariable(simulatorsNamespace)
	acceptScripts(ctx, proxy.GetClient(), config, configFile, ns)
	Expect(proxy.CreateOrUpdate(ctx, manifest)).To(Succeed(), "apply %s", path)

	for _, name := range []string{vcsimDeployment, simDeployment} {
		framework.WaitForDeploymentsAvailable(ctx, framework.WaitForDeploymentsAvailableInput{
			Getter:     proxy.GetClient(),
			Deployment: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		}, config.GetIntervals("default", "wait-simulators")...)
	}
}

// acceptScripts puts the Hyper-V scripts of HYPERV_ACCEPT_SCRIPTS (the previous release's, for the
// provider upgrade spec) into the ConfigMap the simulator reads them from at start; without the
// variable or the folder the simulated hosts run this tree's scripts only.
func acceptScripts(ctx context.Context, c client.Client, config *clusterctl.E2EConfig, configFile, ns string) {
	if !config.HasVariable(hypervAcceptScripts) {
		return
	}
	dir := config.MustGetVariable(hypervAcceptScripts)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(configFile), dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.ps1"))
	Expect(err).ToNot(HaveOccurred())
	if len(files) == 0 {
		return
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "capwin-e2e-sim-accept-scripts"}, Data: map[string]string{}}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the folder the e2e config names
		Expect(err).ToNot(HaveOccurred())
		cm.Data[filepath.Base(f)] = string(b)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).ToNot(HaveOccurred())
	}
	if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).ToNot(HaveOccurred())
	}
}

// simClusterProxy is the management cluster's proxy whose workload cluster proxies dial the
// control plane endpoint through a port-forward to the simulator pod: the endpoint is a
// ClusterIP that only the management cluster's pods reach. Everything else is the framework's.
type simClusterProxy struct {
	framework.ClusterProxy
	namespace string
}

func newSimClusterProxy(p framework.ClusterProxy, config *clusterctl.E2EConfig) framework.ClusterProxy {
	return &simClusterProxy{ClusterProxy: p, namespace: config.MustGetVariable(simulatorsNamespace)}
}

func (p *simClusterProxy) GetWorkloadCluster(ctx context.Context, namespace, name string, options ...framework.Option) framework.ClusterProxy {
	dial := framework.WithRESTConfigModifier(func(c *rest.Config) {
		c.Dial = func(ctx context.Context, _, address string) (net.Conn, error) {
			return p.dialSimulator(ctx, address)
		}
	})
	return p.ClusterProxy.GetWorkloadCluster(ctx, namespace, name, append(options, dial)...)
}

// dialSimulator opens a port-forward to the simulator pod on the port of address (the pod
// listens on the endpoint's port; the Host header and TLS server name stay the endpoint's, so
// the in-memory API server picks the right workload cluster and the certificate verifies).
func (p *simClusterProxy) dialSimulator(ctx context.Context, address string) (net.Conn, error) {
	_, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, err
	}
	pod, err := runningPod(ctx, p.GetClient(), p.namespace, simDeployment)
	if err != nil {
		return nil, err
	}
	return dialPod(ctx, p.GetRESTConfig(), pod, port)
}

// runningPod is a running, not deleted Pod of one of the suite's Deployments (by its
// app.kubernetes.io/name label).
func runningPod(ctx context.Context, c client.Client, namespace, name string) (*corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{simPodLabel: name}); err != nil {
		return nil, err
	}
	for i := range pods.Items {
		if pods.Items[i].Status.Phase == corev1.PodRunning && pods.Items[i].DeletionTimestamp == nil {
			return &pods.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no running %s pod in namespace %s", name, namespace)
}

// dialPod opens a port-forward to port of pod, through the management cluster's API server.
func dialPod(ctx context.Context, cfg *rest.Config, pod *corev1.Pod, port int) (net.Conn, error) {
	d, err := inmemoryproxy.NewDialer(inmemoryproxy.Proxy{
		Kind: "pods", Namespace: pod.Namespace, ResourceName: pod.Name, KubeConfig: cfg, Port: port,
	})
	if err != nil {
		return nil, err
	}
	return d.DialContextWithAddr(ctx, pod.Name)
}

// dumpSimulatorLogs keeps the logs of vcsim and the simulator with the other artifacts.
func dumpSimulatorLogs(ctx context.Context, proxy framework.ClusterProxy, config *clusterctl.E2EConfig, artifacts string) {
	if config == nil || !config.HasVariable(simulatorsNamespace) {
		return
	}
	ns := config.MustGetVariable(simulatorsNamespace)
	dir := filepath.Join(artifacts, "simulators")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		fmt.Printf("Failed to create %s: %v\n", dir, err)
		return
	}
	pods, err := proxy.GetClientSet().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Printf("Failed to list the simulator pods: %v\n", err)
		return
	}
	for _, pod := range pods.Items {
		for _, c := range pod.Spec.Containers {
			stream, err := proxy.GetClientSet().CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: c.Name}).Stream(ctx)
			if err != nil {
				fmt.Printf("Failed to get the logs of %s/%s: %v\n", pod.Name, c.Name, err)
				continue
			}
			data, err := io.ReadAll(stream)
			_ = stream.Close()
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, pod.Name+"-"+c.Name+".log"), data, 0o600)
			}
			if err != nil {
				fmt.Printf("Failed to save the logs of %s/%s: %v\n", pod.Name, c.Name, err)
			}
		}
	}
}
