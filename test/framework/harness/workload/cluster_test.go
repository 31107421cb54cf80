package workload

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func TestWorkloadCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd, kube-apiserver, kube-scheduler and kube-controller-manager")
	}
	logDir := os.Getenv("WORKLOAD_LOG_DIR") // keep the components' logs for a look afterwards
	if logDir == "" {
		logDir = t.TempDir()
	}
	c, err := Start(t.Context(), Options{LogDir: logDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("Start took %v (endpoint %s)", c.StartTime, c.Endpoint)
	checkCAPICredentials(t, c)
	checkKubeadmInit(t, c)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ctx := t.Context()

	createNode(t, cs, "linux-0", "linux", nil)
	createNode(t, cs, "win-0", "windows", []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}})

	labels := map[string]string{"app": "win-app"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "win-app", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelOSStable: "windows"},
					Tolerations:  []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
					Containers:   []corev1.Container{{Name: "app", Image: "mcr.microsoft.com/windows/nanoserver:ltsc2022"}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	eventually(t, "a ReplicaSet and 3 Pods bound to win-0", func() (bool, error) {
		rss, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=win-app"})
		if err != nil || len(rss.Items) != 1 || metav1.GetControllerOf(&rss.Items[0]).Name != "win-app" {
			return false, err
		}
		list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=win-app"})
		if err != nil || len(list.Items) != 3 {
			return false, err
		}
		for _, p := range list.Items {
			if metav1.GetControllerOf(&p).Name != rss.Items[0].Name || p.Spec.NodeName == "" {
				return false, nil
			}
			if p.Spec.NodeName != "win-0" {
				return false, errors.New(p.Name + " bound to " + p.Spec.NodeName)
			}
		}
		pods = list.Items
		return true, nil
	})
	// ServiceAccount admission is on: the Pods got the default ServiceAccount's token volume.
	if p := pods[0]; p.Spec.ServiceAccountName != "default" || len(p.Spec.Volumes) == 0 || p.Spec.Volumes[0].Projected == nil {
		t.Errorf("pod %s: no ServiceAccount token volume: %+v", p.Name, p.Spec.Volumes)
	}

	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "win-app", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(2)),
			Selector:     &metav1.LabelSelector{MatchLabels: labels},
		},
	}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range pods { // play the kubelet
		p := &pods[i]
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = ptr.To(metav1.Now())
		for _, ct := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ct, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
		}
		if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "PDB disruptionsAllowed=1", func() (bool, error) {
		got, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "win-app", metav1.GetOptions{})
		return err == nil && got.Status.ObservedGeneration == got.Generation && got.Status.DisruptionsAllowed == 1, err
	})
	evict := func(name string) error {
		return cs.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
	}
	if err := evict(pods[0].Name); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	if err := evict(pods[1].Name); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("second eviction: want 429 TooManyRequests, got %v", err)
	}

	pids := map[string]int{}
	for _, ch := range c.children {
		pids[ch.Name] = ch.Pid()
	}
	dirs := []string{c.certDir, c.env.ControlPlane.Etcd.DataDir}
	stopStart := time.Now()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop took %v", time.Since(stopStart))
	if err := c.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop: %v", name, pid, err)
		}
	}
	assertNoProcessMentions(t, dirs...)
}
