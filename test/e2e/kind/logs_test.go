//go:build e2e

package kind

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/internal/diagnostics"
	"github.com/capwin/capwin/internal/nodelogs"
)

// Before the spec's own AfterEach dumps and deletes its clusters: when the spec failed, render
// logs of each of its Clusters is kept in <artifacts>/capwin-logs/, as an operator would gather
// them (stories, node logs through Node Log Query, guest logs of nodes that never joined).
var _ = JustAfterEach(func() {
	if !CurrentSpecReport().Failed() || bootstrapClusterProxy == nil {
		return
	}
	keepLogsOfFailedSpec(ctx, bootstrapClusterProxy.GetRESTConfig(), filepath.Join(artifactFolder, "capwin-logs"), CurrentSpecReport().FullText())
})

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// keepLogsOfFailedSpec writes one render logs archive per Cluster of the management cluster,
// named after the spec and the Cluster, with the guests' logs through the guest channel (the
// guest-admin Secret is created where the spec made none). What fails is logged, never failing
// the spec again.
func keepLogsOfFailedSpec(ctx context.Context, cfg *rest.Config, dir, spec string) {
	c, err := client.New(cfg, client.Options{Scheme: diagnostics.Scheme()})
	if err == nil {
		err = os.MkdirAll(dir, 0o750)
	}
	clusters := &clusterv1.ClusterList{}
	if err == nil {
		err = c.List(ctx, clusters)
	}
	if err != nil {
		GinkgoWriter.Printf("capwin logs of the failed spec: %v\n", err)
		return
	}
	for _, cl := range clusters.Items {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		err := ensureGuestAdmin(ctx, c, cl.Namespace)
		var buf bytes.Buffer
		if err == nil {
			_, err = nodelogs.Gather(ctx, c, nodelogs.Target{Kind: nodelogs.Cluster, Namespace: cl.Namespace, Name: cl.Name},
				nodelogs.Options{GuestCredentials: guestAdmin, GuestTimeout: 2 * time.Minute}, &buf)
		}
		cancel()
		if err != nil {
			GinkgoWriter.Printf("capwin logs of Cluster %s/%s: %v\n", cl.Namespace, cl.Name, err)
			continue
		}
		path := filepath.Join(dir, unsafeName.ReplaceAllString(spec, "_")+"-"+cl.Namespace+"-"+cl.Name+".tar.gz")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			GinkgoWriter.Printf("capwin logs of Cluster %s/%s: %v\n", cl.Namespace, cl.Name, err)
			continue
		}
		GinkgoWriter.Printf("capwin logs of Cluster %s/%s (render logs --cluster): %s\n", cl.Namespace, cl.Name, path)
	}
}

// ensureGuestAdmin creates the Secret of the guests' administrator login (guestAdmin) in
// namespace unless it is there.
func ensureGuestAdmin(ctx context.Context, c client.Client, namespace string) error {
	err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: guestAdmin},
		StringData: map[string]string{"username": "Administrator", "password": guestAdminPassword},
	})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
