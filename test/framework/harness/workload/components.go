package workload

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// controllerManagerArgs: all default controllers except those that need a cloud provider or
// Pod CIDRs, plus the two kubeadm enables for joins (bootstrap-signer signs cluster-info for each
// bootstrap token, token-cleaner deletes expired tokens); the cluster CA for kube-root-ca.crt and
// CSR signing; the SA key for legacy tokens.
func controllerManagerArgs(kubeconfig, certDir string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--controllers=*,bootstrap-signer-controller,token-cleaner-controller,-cloud-node-lifecycle-controller,-service-lb-controller,-node-route-controller,-node-ipam-controller",
		"--allocate-node-cidrs=false",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + filepath.Join(certDir, "sa.key"),
		"--root-ca-file=" + filepath.Join(certDir, "ca.crt"),
		"--cluster-signing-cert-file=" + filepath.Join(certDir, "ca.crt"),
		"--cluster-signing-key-file=" + filepath.Join(certDir, "ca.key"),
		"--v=2",
	}
}

func schedulerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
		"--v=2",
	}
}

const probeName = "capwin-workload-scheduler-probe"

// waitReady returns once the controller-manager has created the default ServiceAccount and the
// kube-root-ca.crt ConfigMap in "default" and the scheduler has marked an unschedulable probe Pod
// Unschedulable (which needs no Node). Neither component serves health endpoints (--secure-port=0).
func (c *Cluster) waitReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	poll := func(what string, cond func(ctx context.Context) (bool, error)) error {
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			for _, ch := range c.children {
				if err := ch.Exited(); err != nil {
					return false, err
				}
			}
			return cond(ctx)
		})
		if err != nil {
			return fmt.Errorf("waiting for %s (logs in %s): %w", what, c.LogDir, err)
		}
		return nil
	}
	exists := func(get func(ctx context.Context) error) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			err := get(ctx)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		}
	}
	if err := poll("the default ServiceAccount", exists(func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	})); err != nil {
		return err
	}
	if err := poll("the kube-root-ca.crt ConfigMap", exists(func(ctx context.Context) error {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})); err != nil {
		return err
	}
	pods := cs.CoreV1().Pods("default")
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: probeName},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"capwin.io/scheduler-probe": "no-such-node"},
			Containers:   []corev1.Container{{Name: "probe", Image: "probe"}},
		},
	}
	if _, err := pods.Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create scheduler probe pod: %w", err)
	}
	err = poll("kube-scheduler to mark the probe Pod Unschedulable", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, probeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Reason == corev1.PodReasonUnschedulable {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return pods.Delete(ctx, probeName, *metav1.NewDeleteOptions(0))
}
