package guest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// testIsolation: a process-isolated container needs an image of the host's build; Hyper-V
// isolation (RuntimeClass windows-hyperv) runs an older image, but only on a node whose
// bootstrap configured the runtime handler.
func (f *fixture) testIsolation(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	boot := func(name string, build uint16, hyperV bool) {
		g, _ := f.boot(t, node{format: userdata.FormatCloudConfig, name: name, token: createToken(t, f.cs, 15*time.Minute), hyperV: hyperV},
			build, guest.Faults{}, time.Minute)
		waitDone(t, g, 90*time.Second)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: join: %v", name, err)
		}
	}
	boot("win-iso-25", osversion.LTSC2025, true)
	boot("win-iso-22", osversion.LTSC2022, false)
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "windows-hyperv"}, Handler: userdata.RuntimeHypervisor}
	if _, err := f.cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const iis = "mcr.microsoft.com/windows/servercore/iis:windowsservercore-"
	for _, c := range []struct {
		name, node, image, runtimeClass, refusal string
	}{
		{"same-build", "win-iso-25", iis + "ltsc2025", "", ""},
		{"older-build", "win-iso-25", iis + "ltsc2022", "", "does not match the host operating system"},
		{"older-build-hyperv", "win-iso-25", iis + "ltsc2022", "windows-hyperv", ""},
		{"no-hyperv-handler", "win-iso-22", iis + "ltsc2022", "windows-hyperv", `no runtime for "runhcs-wcow-hypervisor"`},
	} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: c.node, Containers: []corev1.Container{{Name: "app", Image: c.image}},
				Tolerations: []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpExists}}},
		}
		if c.runtimeClass != "" {
			pod.Spec.RuntimeClassName = ptr.To(c.runtimeClass)
		}
		if _, err := f.cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, c.name, time.Minute, func(ctx context.Context) (bool, error) {
			p, err := f.cs.CoreV1().Pods("default").Get(ctx, c.name, metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) != 1 {
				return false, err
			}
			st := p.Status.ContainerStatuses[0].State
			if c.refusal == "" {
				return p.Status.Phase == corev1.PodRunning && st.Running != nil, nil
			}
			return p.Status.Phase == corev1.PodPending && st.Waiting != nil && st.Waiting.Reason == "CreateContainerError" &&
				strings.Contains(st.Waiting.Message, c.refusal), nil
		})
	}
}
