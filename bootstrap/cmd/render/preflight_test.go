package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/internal/preflight"
	"github.com/capwin/capwin/internal/preflight/registrytest"
)

// TestPreflight runs `render preflight` against a real apiserver (the Cluster's kubeconfig Secret
// points back at it) whose Windows workloads use images from in-process registries under a
// private CA: ltsc2022-only, ltsc2025-only and multi-build images, one in a registry that needs
// the ServiceAccount's pull Secret.
func TestPreflight(t *testing.T) {
	if testing.Short() {
		t.Skip("envtest")
	}
	g := NewWithT(t)
	regs := registrytest.Start(t)
	pub, priv := regs.Public, regs.Private
	only2022 := regs.Push(t, pub, "win/iis:ltsc2022", false, registrytest.LTSC2022)
	only2025 := regs.Push(t, pub, "win/agent:ltsc2025", false, registrytest.LTSC2025)
	multi := regs.Push(t, pub, "win/iis:multi", true, registrytest.LTSC2022, registrytest.LTSC2025, registrytest.Linux)
	private2022 := regs.Push(t, priv, "corp/report:ltsc2022", false, registrytest.LTSC2022)

	ctx := t.Context()
	const ns = "shop"
	kubeconfig, c := selfManaged(t, g, ns)
	create(ctx, g, c, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "windows-hyperv"}, Handler: "runhcs-wcow-hypervisor"})
	auth := base64.StdEncoding.EncodeToString([]byte(regs.User + ":" + regs.Password))
	dockerConfig, _ := json.Marshal(map[string]any{"auths": map[string]any{registrytest.Host(priv): map[string]string{"auth": auth}}})
	create(ctx, g, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "corp-pull", Namespace: ns},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: dockerConfig}})
	create(ctx, g, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reporter", Namespace: ns},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "corp-pull"}}})

	windows := func(spec *corev1.PodSpec) { spec.NodeSelector = map[string]string{"kubernetes.io/os": "windows"} }
	deploy(ctx, g, c, "iis-2022", template(only2022, windows))
	deploy(ctx, g, c, "iis-multi", template(multi, windows))
	deploy(ctx, g, c, "linux-web", template(only2022, nil)) // no Windows selector: not a Windows workload
	deploy(ctx, g, c, "no-such-class", template(multi, windows, func(s *corev1.PodSpec) { s.RuntimeClassName = ptr.To("hyperv") }))
	deploy(ctx, g, c, "typo", template(registrytest.Host(pub)+"/win/iss:ltsc2025", windows))
	create(ctx, g, c, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db-hyperv", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template(only2022, windows, func(s *corev1.PodSpec) { s.RuntimeClassName = ptr.To("windows-hyperv") })}})
	create(ctx, g, c, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template(only2025, func(s *corev1.PodSpec) { s.OS = &corev1.PodOS{Name: corev1.Windows} })}})
	create(ctx, g, c, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "report", Namespace: ns},
		Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: template(private2022, windows, func(s *corev1.PodSpec) {
				s.ServiceAccountName = "reporter"
				s.RestartPolicy = corev1.RestartPolicyNever
			})}}}})
	create(ctx, g, c, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: ns},
		Spec: batchv1.JobSpec{Template: template(multi, func(s *corev1.PodSpec) {
			s.NodeSelector = map[string]string{"node.kubernetes.io/windows-build": "10.0.20348"}
			s.RestartPolicy = corev1.RestartPolicyNever
		})}})

	// Against ltsc2025: iis-2022 (process isolation), the private report, the pinned migrate
	// Job, the missing RuntimeClass and the typo are named; iis-multi, db-hyperv (Hyper-V
	// isolation) and agent start.
	var out bytes.Buffer
	err := run([]string{"preflight", "--kubeconfig", kubeconfig, "-n", ns, "--target", "ltsc2025", "--registry-ca", regs.CAFile, "win"}, &out)
	g.Expect(err).To(MatchError("preflight against 10.0.26100 (ltsc2025): 4 findings keep Pods from starting, 1 image could not be read"))
	text := out.String()
	g.Expect(text).To(ContainSubstring("Windows workloads against 10.0.26100 (ltsc2025): 8 Pod templates, 8 containers checked; RuntimeClasses with Hyper-V isolation: windows-hyperv"))
	g.Expect(text).To(ContainSubstring("shop/Deployment iis-2022\n  container app, image " + only2022 + " (Windows builds: 10.0.20348.2700)\n" +
		"    problem: no image for 10.0.26100 (ltsc2025) and process isolation, which needs the node's build\n"))
	g.Expect(text).To(ContainSubstring("runtimeClassName: windows-hyperv (nodes with hyperVIsolation: true"))
	g.Expect(text).To(ContainSubstring("shop/CronJob report\n  container app, image " + private2022 + " (Windows builds: 10.0.20348.2700)"))
	g.Expect(text).To(ContainSubstring("shop/Job migrate\n    problem: pinned to node.kubernetes.io/windows-build 10.0.20348"))
	g.Expect(text).To(ContainSubstring("shop/Deployment no-such-class\n    problem: runtimeClassName hyperv names no RuntimeClass"))
	g.Expect(text).To(MatchRegexp(`shop/Deployment typo\n  container app, image \S+/win/iss:ltsc2025 \(Windows builds: unknown\)\n    problem: could not read the image: .*NAME_UNKNOWN`))
	for _, fine := range []string{"iis-multi", "db-hyperv", "agent", "linux-web"} {
		g.Expect(text).NotTo(ContainSubstring(" "+fine+"\n"), fine)
	}

	// Against ltsc2022, as JSON from the workload kubeconfig: now the ltsc2025-only agent is the
	// one that fails, and Hyper-V isolation does not help it.
	out.Reset()
	err = run([]string{"preflight", "--workload-kubeconfig", kubeconfig, "--workload-namespace", ns, "--target", "10.0.20348", "-o", "json", "--registry-ca", regs.CAFile}, &out)
	g.Expect(err).To(MatchError("preflight against 10.0.20348 (ltsc2022): 2 findings keep Pods from starting, 1 image could not be read"))
	var report preflight.Report
	g.Expect(json.Unmarshal(out.Bytes(), &report)).To(Succeed())
	var named []string
	for _, f := range report.Findings {
		named = append(named, f.Workload.Name)
	}
	g.Expect(named).To(ConsistOf("no-such-class", "typo", "agent"))

	// Without the CA every image is unchecked, and said so; usage errors are plain.
	out.Reset()
	err = run([]string{"preflight", "--workload-kubeconfig", kubeconfig, "--target", "2025"}, &out)
	g.Expect(err).To(MatchError(HaveSuffix("2 findings keep Pods from starting, 8 images could not be read")))
	g.Expect(out.String()).To(ContainSubstring("certificate"))
	g.Expect(run([]string{"preflight", "--target", "2025"}, &out)).To(MatchError(ContainSubstring(preflightUsage)))
	g.Expect(run([]string{"preflight", "--target", "2030x", "win"}, &out)).To(MatchError(ContainSubstring(`target build "2030x"`)))
}

var selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}

func template(image string, edits ...func(*corev1.PodSpec)) corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	for _, e := range edits {
		if e != nil {
			e(&t.Spec)
		}
	}
	return t
}

func deploy(ctx context.Context, g Gomega, c client.Client, name string, t corev1.PodTemplateSpec) {
	create(ctx, g, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec: appsv1.DeploymentSpec{Selector: selector, Template: t}})
}
