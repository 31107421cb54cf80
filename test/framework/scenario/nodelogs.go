package scenario

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// AskLogs is RequestLogs then WaitLogs.
func AskLogs(t *testing.T, c client.Client, machine client.Object, id, credentials string) *corev1.Secret {
	t.Helper()
	RequestLogs(t, c, machine, id, credentials)
	return WaitLogs(t, c, machine, id)
}

// RequestLogs sets a log request (infrav1.CollectLogsAnnotation) with request id on an
// infrastructure machine, with the guest login Secret credentials ("" for its
// spec.guestCredentialsRef), as render logs does.
func RequestLogs(t *testing.T, c client.Client, machine client.Object, id, credentials string) {
	t.Helper()
	g := NewWithT(t)
	annotations := map[string]any{infrav1.CollectLogsAnnotation: id, infrav1.CollectLogsCredentialsAnnotation: nil}
	if credentials != "" {
		annotations[infrav1.CollectLogsCredentialsAnnotation] = credentials
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Patch(context.Background(), machine, client.RawPatch(apitypes.MergePatchType, patch))).To(Succeed())
}

// WaitLogs waits for the manager's answer to request id: the machine's node logs Secret.
func WaitLogs(t *testing.T, c client.Client, machine client.Object, id string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	NewWithT(t).Eventually(func(g Gomega) {
		key := client.ObjectKey{Namespace: machine.GetNamespace(), Name: infrav1.NodeLogsSecretName(machine.GetName())}
		g.Expect(c.Get(context.Background(), key, s)).To(Succeed())
		g.Expect(s.Annotations).To(HaveKeyWithValue(infrav1.CollectLogsAnnotation, id))
	}, settle, 50*time.Millisecond).Should(Succeed())
	return s
}
