package secretscan

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/internal/test/envtest"
)

// TestPlantedSecretInALogLineIsFound: a password written to a log as is, JSON-escaped (a domain
// user's backslash) or base64-encoded is found, with its file and line; the hit never shows the
// value; a value too short to be told from chance is not searched for.
func TestPlantedSecretInALogLineIsFound(t *testing.T) {
	g := NewWithT(t)
	s := New()
	s.Add("Secret ns/vc key password", "Vc-pw-0a1b2c3d")
	s.Add("Secret ns/domain key password", `j0in\pw'$(x)`)
	s.Add("Secret ns/short key password", "pass")
	dir := t.TempDir()
	log := strings.Join([]string{
		`{"level":"info","msg":"logged in","user":"capwin"}`,
		`{"level":"debug","msg":"login","password":"Vc-pw-0a1b2c3d"}`,
		`{"level":"debug","msg":"join","password":"j0in\\pw'$(x)"}`,
		`{"level":"debug","msg":"body","data":"` + base64.StdEncoding.EncodeToString([]byte("Vc-pw-0a1b2c3d")) + `"}`,
		`{"level":"info","msg":"tests passed"}`,
	}, "\n")
	g.Expect(os.WriteFile(filepath.Join(dir, "controllers.log"), []byte(log), 0o600)).To(Succeed())
	hits, files, err := s.Files(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(Equal(1))
	g.Expect(hits).To(HaveLen(3))
	where := filepath.Join(dir, "controllers.log")
	g.Expect(hits[0].Secret).To(Equal("Secret ns/vc key password"))
	g.Expect(hits[0].Where).To(Equal("file " + where + " line 2"))
	g.Expect(hits[1].Where).To(Equal("file " + where + " line 3"))
	g.Expect(hits[1].Secret).To(Equal("Secret ns/domain key password"))
	g.Expect(hits[2].Where).To(Equal("file " + where + " line 4"))
	for _, h := range hits {
		g.Expect(h.String()).NotTo(ContainSubstring("Vc-pw-0a1b2c3d"))
		g.Expect(h.String()).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString([]byte("Vc-pw-0a1b2c3d"))))
		g.Expect(h.String()).NotTo(ContainSubstring(`j0in`))
		g.Expect(h.Excerpt).To(ContainSubstring("<redacted>"))
	}
	g.Expect(s.Names()).To(Equal([]string{"Secret ns/domain key password", "Secret ns/vc key password"}))
}

// TestClusterScan: the credentials of a management cluster's Secrets are collected (passwords,
// a docker config, a bootstrap token Secret, the token inside capwin's user data in a data Secret,
// also when the Secret is deleted soon after); then a credential planted in an Event, an object's
// condition and annotation and a metric's label is found in each place.
func TestClusterScan(t *testing.T) {
	g := NewWithT(t)
	env, err := envtest.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := client.New(env.Config, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(clusterv1.AddToScheme(c.Scheme())).To(Succeed())
	ns := "scan"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	s := New()
	t.Log("start", time.Now())
	g.Expect(s.Watch(ctx, env.Config, "")).To(Succeed())
	data, err := userdata.Render(userdata.Input{NodeName: "win-a1", KubernetesVersion: "v1.36.3",
		Join: userdata.Join{APIServerEndpoint: "10.0.0.10:6443", Token: "k7x2pq.v9m3n8b1c4d7e2f5",
			CACertHashes: []string{"sha256:" + strings.Repeat("a", 64)}, CRISocket: "npipe:////./pipe/containerd-containerd"},
		Binaries: userdata.Binaries{Directory: `C:\k`}, PauseImage: "registry.k8s.io/pause:3.10"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).NotTo(ContainSubstring("v9m3n8b1c4d7e2f5"), "the token is inside the encoded data document")
	secrets := []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "vcenter", Namespace: ns}, Data: map[string][]byte{"username": []byte("capwin"), "password": []byte("Vc-pw-0a1b2c3d")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pull", Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.corp:5000":{"username":"puller","password":"Reg-pw-99xx","auth":"cHVsbGVyOlJlZy1wdy05OXh4"}}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-h4s8d2", Namespace: metav1.NamespaceSystem}, Type: corev1.SecretTypeBootstrapToken,
			Data: map[string][]byte{"token-id": []byte("h4s8d2"), "token-secret": []byte("q1w2e3r4t5y6u7i8")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "win-a1", Namespace: ns}, Type: clusterv1.ClusterSecretType, Data: map[string][]byte{"value": data}},
	}
	for _, sec := range secrets {
		g.Expect(c.Create(ctx, sec)).To(Succeed())
	}
	g.Expect(c.Delete(ctx, secrets[3])).To(Succeed())
	want := []string{
		"Secret kube-system/bootstrap-token-h4s8d2 (bootstrap token secret)",
		"Secret scan/pull registry registry.corp:5000 auth",
		"Secret scan/pull registry registry.corp:5000 password",
		"Secret scan/vcenter key password",
		"Secret scan/win-a1 (bootstrap token secret in the data)",
	}
	g.Eventually(s.Names, 10*time.Second, 50*time.Millisecond).To(ContainElements(want))
	t.Log("collected", time.Now())
	hits, err := s.Cluster(ctx, env.Config)
	t.Log("scanned", time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits).To(BeEmpty(), "nothing is planted yet")

	cs, err := kubernetes.NewForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "leak", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Machine", Namespace: ns, Name: "m1"}, Reason: "LoginFailed",
		Message: "login with Vc-pw-0a1b2c3d refused", Type: corev1.EventTypeWarning}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: ns,
		Annotations: map[string]string{"example.com/token": "k7x2pq.v9m3n8b1c4d7e2f5"}}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
	g.Expect(c.Create(ctx, cluster)).To(Succeed())
	cluster.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Pull",
		Message: "pull with Reg-pw-99xx failed", LastTransitionTime: metav1.Now()}}
	g.Expect(c.Status().Update(ctx, cluster)).To(Succeed())
	hits, err = s.Cluster(ctx, env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	var got []string
	for _, h := range hits {
		got = append(got, h.Secret+" @ "+h.Where)
	}
	g.Expect(got).To(ConsistOf(
		"Secret scan/vcenter key password @ Event scan/leak (Machine m1)",
		"Secret scan/win-a1 (bootstrap token in the data) @ Cluster scan/c1 annotation example.com/token",
		"Secret scan/win-a1 (bootstrap token secret in the data) @ Cluster scan/c1 annotation example.com/token",
		"Secret scan/pull registry registry.corp:5000 password @ Cluster scan/c1 status",
	))

	reg := prometheus.NewRegistry()
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "capwin_logins_total", Help: "logins"}, []string{"user"})
	counter.WithLabelValues("q1w2e3r4t5y6u7i8").Inc()
	reg.MustRegister(counter)
	hits, err = s.Metrics("metrics of the test registry", reg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits).To(HaveLen(1))
	g.Expect(hits[0].Where).To(HavePrefix("metrics of the test registry line "))
	g.Expect(hits[0].Excerpt).To(Equal(`capwin_logins_total{user="<redacted>"} 1`))
}
