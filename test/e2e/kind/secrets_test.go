//go:build e2e

package kind

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/test/framework"

	"github.com/capwin/capwin/test/framework/secretscan"
)

// secretScan holds every credential the suite's clusters used: it watches the management
// cluster's Secrets from clusterctl init on (first ginkgo process only), so the bootstrap tokens
// inside the short-lived bootstrap data are caught too.
var secretScan *secretscan.Scanner

func startSecretScan(proxy framework.ClusterProxy) {
	secretScan = secretscan.New()
	Expect(secretScan.Watch(watchesCtx, proxy.GetRESTConfig(), "")).To(Succeed(), "watch the management cluster's Secrets")
}

// scanSecrets fails the suite when a credential the run used is in capwin's managers' logs (as
// the framework's log watchers wrote them, and the current Pods' logs, previous containers
// included), in the management cluster's Events, in the status, conditions and annotations of
// Cluster API's and capwin's objects, or in the managers' metrics.
func scanSecrets(proxy framework.ClusterProxy) {
	names := secretScan.Names()
	Expect(secretScan.CheckCollected()).To(Succeed())
	var hits []secretscan.Hit
	add := func(found []secretscan.Hit, err error) {
		ExpectWithOffset(1, err).ToNot(HaveOccurred())
		hits = append(hits, found...)
	}
	token := metricsReaderToken(ctx, proxy)
	files := 0
	for _, m := range capwinManagers {
		dir := filepath.Join(artifactFolder, "clusters", proxy.GetName(), "logs", m.namespace)
		if _, err := os.Stat(dir); err == nil {
			found, n, err := secretScan.Files(dir)
			add(found, err)
			files += n
		}
		pods := &corev1.PodList{}
		Expect(proxy.GetClient().List(ctx, pods, client.InNamespace(m.namespace))).To(Succeed())
		for _, pod := range pods.Items {
			for _, c := range pod.Spec.Containers {
				for _, previous := range []bool{false, true} {
					logs, err := proxy.GetClientSet().CoreV1().Pods(pod.Namespace).GetLogs(pod.Name,
						&corev1.PodLogOptions{Container: c.Name, Previous: previous}).Stream(ctx)
					if err != nil {
						continue // no previous container
					}
					add(secretScan.Reader(fmt.Sprintf("log of %s/%s %s (previous %t)", pod.Namespace, pod.Name, c.Name, previous), logs))
					_ = logs.Close()
				}
			}
		}
		pod, _ := leaderPod(ctx, proxy.GetClient(), m)
		code, body := scrapeMetrics(ctx, proxy, pod, token)
		Expect(code).To(Equal(http.StatusOK), "metrics of %s", pod.Name)
		hits = append(hits, secretScan.Text("metrics of "+pod.Namespace+"/"+pod.Name, body)...)
	}
	Expect(files).To(BeNumerically(">", 0), "no log file of capwin's managers under the artifacts folder")
	add(secretScan.Cluster(ctx, proxy.GetRESTConfig()))
	Expect(secretscan.Verdict(hits)).To(Succeed())
	Byf("Secret scan: none of %d credentials in %d log files and the current logs of capwin's managers (CAPWIN_LOG_VERBOSITY %s), events, objects or metrics",
		len(names), files, e2eConfig.MustGetVariable("CAPWIN_LOG_VERBOSITY"))
}
