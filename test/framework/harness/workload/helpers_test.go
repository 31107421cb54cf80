package workload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// assertNoProcessMentions fails if any process's command line mentions one of dirs (the
// apiserver's cert dir, which the children's kubeconfigs live in too, and etcd's data dir).
func assertNoProcessMentions(t *testing.T, dirs ...string) {
	entries, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(string(data), "\x00", " ")
		for _, d := range dirs {
			if d != "" && strings.Contains(cmdline, d) {
				t.Errorf("leftover process %s: %s", e, cmdline)
			}
		}
	}
}

func createNode(t *testing.T, cs kubernetes.Interface, name, osName string, taints []corev1.Taint) {
	t.Helper()
	ctx := t.Context()
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelOSStable: osName, corev1.LabelArchStable: "amd64", corev1.LabelHostname: name,
		}},
		Spec: corev1.NodeSpec{Taints: taints},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	status := corev1.NodeStatus{
		Capacity: res, Allocatable: res,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		NodeInfo: corev1.NodeSystemInfo{OperatingSystem: osName, Architecture: "amd64"},
	}
	// The controller-manager's ttl and node-lifecycle controllers write to new Nodes too.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Status = status
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	begin := time.Now()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	t.Logf("%s after %v", what, time.Since(begin).Round(time.Millisecond))
}
