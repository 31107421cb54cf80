package windowsconfig_test

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

const (
	tokenIDAnnotation      = "bootstrap.cluster.x-k8s.io/windows-token-id"
	tokenRevokedAnnotation = "bootstrap.cluster.x-k8s.io/windows-token-revoked"
	tokenFinalizer         = "windowsconfig.bootstrap.cluster.x-k8s.io/revoke-token"
)

func TestJoinDataIsRenderedWithAWorkingTokenAndCAHash(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	issued := tokenOps(g, "issue")
	f := newFixture(t, readyCluster())
	s := f.dataSecret(t)
	g.Expect(tokenOps(g, "issue")).To(BeNumerically(">=", issued+1), "the token is counted")

	g.Expect(s.Type).To(Equal(clusterv1.ClusterSecretType))
	g.Expect(string(s.Data["format"])).To(Equal("powershell"))
	g.Expect(metav1.IsControlledBy(s, f.get(g))).To(BeTrue(), "data secret must be owned by the config")
	g.Expect(s.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "win"))
	g.Expect(string(s.Data["value"])).To(HavePrefix("#ps1_sysnative"))

	id := s.Annotations[tokenIDAnnotation]
	tok := tokenSecret(g, id)
	g.Expect(tok.Type).To(Equal(corev1.SecretType(bootstrapapi.SecretTypeBootstrapToken)))
	g.Expect(string(tok.Data[bootstrapapi.BootstrapTokenUsageAuthentication])).To(Equal("true"))
	g.Expect(string(tok.Data[bootstrapapi.BootstrapTokenExtraGroupsKey])).To(Equal("system:bootstrappers:kubeadm:default-node-token"))
	exp, err := time.Parse(time.RFC3339, string(tok.Data[bootstrapapi.BootstrapTokenExpirationKey]))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exp).To(BeTemporally(">", time.Now().Add(5*time.Minute)))

	data := scriptData(g, s.Data["value"])
	token := id + "." + string(tok.Data[bootstrapapi.BootstrapTokenSecretKey])
	pin, _ := os.ReadFile("testdata/ca.pin")
	g.Expect(data).To(ContainSubstring(token))
	g.Expect(data).To(ContainSubstring(strings.TrimSpace(string(pin))))
	g.Expect(data).To(ContainSubstring(f.cluster.Spec.ControlPlaneEndpoint.Host))

	cfg := f.get(g)
	g.Expect(cfg.Status.DataSecretName).To(Equal(cfg.Name))
	g.Expect(cfg.Status.ObservedGeneration).To(Equal(cfg.Generation))
	g.Expect(f.condition(g, bootstrapv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
}

func TestCloudConfigFormatIsMultipart(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.spec.Format = bootstrapv1.FormatCloudConfig
	o.spec.Timezone = "W. Europe Standard Time"
	s := newFixture(t, o).dataSecret(t)
	g.Expect(string(s.Data["format"])).To(Equal("cloud-config"))
	g.Expect(string(s.Data["value"])).To(HavePrefix("Content-Type: multipart/mixed"))
	doc := dataDocument(g, s.Data["value"])
	g.Expect(doc.Mode).To(Equal(userdata.ModeCloudbaseInit))
	g.Expect(doc.Time.Timezone).To(Equal("W. Europe Standard Time"))
}

func TestWaitsForClusterInfrastructure(t *testing.T) {
	t.Parallel()
	o := readyCluster()
	o.infraProvisioned = false
	f := newFixture(t, o)
	f.waitReason(t, bootstrapv1.WaitingForClusterInfrastructureReason)
	NewWithT(t).Expect(f.condition(NewWithT(t), bootstrapv1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
}

func TestWaitsForControlPlaneThenJoins(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.cpInitialized = false
	f := newFixture(t, o)
	f.waitReason(t, bootstrapv1.WaitingForControlPlaneInitializedReason)

	// The control plane comes up: the Cluster watch must wake the config without a manual nudge.
	setCPInitialized(g, f)
	f.dataSecret(t)
}

func TestFileFromMissingSecretGivesAClearConditionThenRenders(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.spec.Files = []bootstrapv1.File{{Path: `C:\etc\app\settings.json`,
		ContentFrom: &bootstrapv1.FileSource{Secret: bootstrapv1.SecretKey{Name: "app-settings", Key: "settings.json"}}}}
	f := newFixture(t, o)
	c := f.waitReason(t, bootstrapv1.FileSecretNotAvailableReason)
	g.Expect(c.Message).To(ContainSubstring("app-settings"))
	g.Expect(c.Message).To(ContainSubstring(`C:\etc\app\settings.json`))

	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-settings", Namespace: f.ns},
		Data: map[string][]byte{"settings.json": []byte(`{"connection":"s3cr3t-value"}`)}})).To(Succeed())
	s := f.dataSecret(t)
	files := dataDocument(g, s.Data["value"]).Files
	g.Expect(files).To(HaveLen(2)) // and capwin's kubelet configuration patch
	g.Expect(files[0].Path).To(Equal(`C:\etc\app\settings.json`))
	content, err := base64.StdEncoding.DecodeString(files[0].Content)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(content)).To(Equal(`{"connection":"s3cr3t-value"}`))
}

func TestTokenIsExtendedWhileTheNodeHasNotJoined(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, readyCluster())
	s := f.dataSecret(t)
	id := s.Annotations[tokenIDAnnotation]

	// Make the token look nearly expired; the next reconcile must push the expiration out.
	tok := tokenSecret(g, id)
	tok.Data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(time.Now().UTC().Add(time.Minute).Format(time.RFC3339))
	g.Expect(k8s.Update(ctx, tok)).To(Succeed())
	refreshed := tokenOps(g, "refresh")
	touch(g, f)
	g.Eventually(func(g Gomega) {
		exp, err := time.Parse(time.RFC3339, string(tokenSecret(g, id).Data[bootstrapapi.BootstrapTokenExpirationKey]))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(exp).To(BeTemporally(">", time.Now().Add(10*time.Minute)))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(tokenOps(g, "refresh")).To(BeNumerically(">=", refreshed+1), "the refresh is counted")
}

func TestLostTokenIsReissuedAndDataReRendered(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, readyCluster())
	s := f.dataSecret(t)
	oldID := s.Annotations[tokenIDAnnotation]
	g.Expect(k8s.Delete(ctx, tokenSecret(g, oldID))).To(Succeed())
	touch(g, f)

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Annotations[tokenIDAnnotation]).NotTo(Equal(oldID))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	newID := s.Annotations[tokenIDAnnotation]
	tok := tokenSecret(g, newID)
	g.Expect(scriptData(g, s.Data["value"])).To(ContainSubstring(newID + "." + string(tok.Data[bootstrapapi.BootstrapTokenSecretKey])))
}

func TestJoinedMachineRevokesItsToken(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, readyCluster())
	s := f.dataSecret(t)
	id := s.Annotations[tokenIDAnnotation]
	tokenSecret(g, id) // exists while the node has not joined

	m := &clusterv1.Machine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.machine), m)).To(Succeed())
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: "win-md-0-abcde"}
	revoked := tokenOps(g, "revoke")
	g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
	touch(g, f)

	g.Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "token deleted once the node joined: %v", err)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Annotations).To(HaveKey(tokenRevokedAnnotation))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Annotations[tokenIDAnnotation]).To(Equal(id), "a joined node needs no new token")
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(tokenOps(g, "revoke")).To(Equal(revoked+1), "one revocation, counted once across reconciles")
}

func TestStatusIsRestoredFromTheMachineAfterMove(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.cpInitialized = false // would wait forever if it tried to generate
	f := newFixture(t, o)
	m := &clusterv1.Machine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.machine), m)).To(Succeed())
	m.Spec.Bootstrap.DataSecretName = ptr.To("moved-secret")
	g.Expect(k8s.Update(ctx, m)).To(Succeed())

	g.Eventually(func(g Gomega) {
		cfg := f.get(g)
		g.Expect(cfg.Status.DataSecretName).To(Equal("moved-secret"))
		g.Expect(ptr.Deref(cfg.Status.Initialization.DataSecretCreated, false)).To(BeTrue())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestPausedClusterIsNotReconciled(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.paused = true
	f := newFixture(t, o)
	g.Eventually(func(g Gomega) {
		g.Expect(f.condition(g, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(f.get(g).Status.Initialization.DataSecretCreated).To(BeNil())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
}

func TestForeignSecretWithTheSameNameIsNeverOverwritten(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.cpInitialized = false
	f := newFixture(t, o)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.config.Name, Namespace: f.ns},
		Data: map[string][]byte{"value": []byte("precious")}}
	g.Expect(k8s.Create(ctx, foreign)).To(Succeed())
	setCPInitialized(g, f)

	c := f.waitReason(t, bootstrapv1.DataSecretNotCreatedReason)
	g.Expect(c.Message).To(ContainSubstring("not controlled by this WindowsConfig"))
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(foreign), foreign)).To(Succeed())
	g.Expect(string(foreign.Data["value"])).To(Equal("precious"))
}

// touch changes an annotation so the controller reconciles the config now.
func touch(g Gomega, f *fixture) {
	cfg := f.get(g)
	if cfg.Annotations == nil {
		cfg.Annotations = map[string]string{}
	}
	cfg.Annotations["test/touch"] = time.Now().Format(time.RFC3339Nano)
	g.Expect(k8s.Update(ctx, cfg)).To(Succeed())
}

func setCPInitialized(g Gomega, f *fixture) {
	c := &clusterv1.Cluster{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.cluster), c)).To(Succeed())
	c.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ClusterControlPlaneInitializedCondition,
		Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}}
	g.Expect(k8s.Status().Update(ctx, c)).To(Succeed())
}

func TestUnreachableWorkloadClusterGivesAClearCondition(t *testing.T) {
	t.Parallel()
	o := readyCluster()
	o.unreachable = true
	f := newFixture(t, o)
	c := f.waitReason(t, bootstrapv1.WorkloadClusterNotReachableReason)
	NewWithT(t).Expect(c.Message).To(ContainSubstring("workload cluster"))
}

func TestDeletedConfigIsNotRecreatedAndItsSecretIsOwned(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, readyCluster())
	s := f.dataSecret(t)
	cfg := f.get(g)
	// The Secret is controlled by the config, so Kubernetes' garbage collector removes it.
	g.Expect(metav1.IsControlledBy(s, cfg)).To(BeTrue())

	g.Expect(k8s.Delete(ctx, cfg)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(cfg), &bootstrapv1.WindowsConfig{}))
	}, 10*time.Second, 100*time.Millisecond).Should(BeTrue())
	// No finalizer is needed and nothing brings the config or a second Secret back.
	g.Consistently(func() int {
		list := &corev1.SecretList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		return len(list.Items)
	}, 2*time.Second, 200*time.Millisecond).Should(Equal(3), "CA, kubeconfig and the one data Secret")
}

func TestDeletedConfigRevokesItsToken(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, readyCluster())
	s := f.dataSecret(t)
	id := s.Annotations[tokenIDAnnotation]
	tokenSecret(g, id)
	cfg := &bootstrapv1.WindowsConfig{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.config), cfg)).To(Succeed())
	g.Expect(cfg.Finalizers).To(ContainElement(tokenFinalizer))

	// The Machine is deleted before its node joined (scale-down, remediation): CAPI deletes the config.
	g.Expect(k8s.Delete(ctx, cfg)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "token revoked: %v", err)
		err = k8s.Get(ctx, client.ObjectKeyFromObject(cfg), cfg)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "config gone once its token is revoked: %v", err)
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestLostStatusAdoptsTheDataSecretInsteadOfASecondToken(t *testing.T) {
	g := NewWithT(t)
	f := newFixture(t, readyCluster())
	s := f.dataSecret(t)
	id := s.Annotations[tokenIDAnnotation]
	before := &corev1.SecretList{}
	g.Expect(k8s.List(ctx, before, client.InNamespace(metav1.NamespaceSystem))).To(Succeed())

	// A reconcile that does not see the status (stale cache, lost patch) must not issue a new token.
	cfg := f.get(g)
	cfg.Status.DataSecretName, cfg.Status.Initialization.DataSecretCreated = "", nil
	g.Expect(k8s.Status().Update(ctx, cfg)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(ptr.Deref(f.get(g).Status.Initialization.DataSecretCreated, false)).To(BeTrue())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
	g.Expect(s.Annotations[tokenIDAnnotation]).To(Equal(id))
	after := &corev1.SecretList{}
	g.Expect(k8s.List(ctx, after, client.InNamespace(metav1.NamespaceSystem))).To(Succeed())
	g.Expect(after.Items).To(HaveLen(len(before.Items)), "no second token")
}

// TestMovedJoinedMachineGetsNoNewToken: after clusterctl move the WindowsConfig and the Machine
// arrive without status. The config's status comes back from the Machine at once, its nodeRef
// only once CAPI has reached the workload cluster again; in between the config must not take
// the revoked token of its joined node for a lost one (regression: it issued a new token and
// re-rendered the bootstrap data of a node that had joined long ago).
func TestMovedJoinedMachineGetsNoNewToken(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newFixture(t, readyCluster())
	s := f.dataSecret(t)
	id, value := s.Annotations[tokenIDAnnotation], s.Data["value"]
	m := &clusterv1.Machine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.machine), m)).To(Succeed())
	m.Spec.Bootstrap.DataSecretName = ptr.To(s.Name) // as CAPI's Machine controller sets it
	g.Expect(k8s.Update(ctx, m)).To(Succeed())
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: "win-md-0-abcde"}
	g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
	g.Eventually(func(g Gomega) { touch(g, f) }, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Annotations).To(HaveKey(tokenRevokedAnnotation))
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())

	// The move: both statuses lost, the Machine's nodeRef not restored yet.
	m.Status = clusterv1.MachineStatus{}
	g.Expect(k8s.Status().Update(ctx, m)).To(Succeed())
	g.Eventually(func(g Gomega) { // the reconciler writes the config too: retry on conflicts
		cfg := f.get(g)
		cfg.Status = bootstrapv1.WindowsConfigStatus{}
		g.Expect(k8s.Status().Update(ctx, cfg)).To(Succeed())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(ptr.Deref(f.get(g).Status.Initialization.DataSecretCreated, false)).To(BeTrue())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) { touch(g, f) }, 20*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())
		g.Expect(s.Annotations[tokenIDAnnotation]).To(Equal(id), "no new token for a joined node")
		g.Expect(s.Annotations).To(HaveKey(tokenRevokedAnnotation))
		g.Expect(s.Data["value"]).To(Equal(value), "bootstrap data not re-rendered")
		// The suite's other configs issue tokens in the same apiserver: the token of this one is
		// the one its data Secret names, so an unchanged Secret means no token was issued.
		err := k8s.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the revoked token stays revoked: %v", err)
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
}

// TestRegistriesFromSecretAndConfigMap: a registry whose CA comes from a ConfigMap and whose
// credentials come from a Secret waits, with a condition naming what is missing (never a value),
// until both exist; then the data holds the hosts.toml folder, the CA and containerd's
// credentials, and an insecure mirror is announced by a Warning event.
func TestRegistriesFromSecretAndConfigMap(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	ca, err := os.ReadFile("testdata/ca.crt")
	g.Expect(err).NotTo(HaveOccurred())
	o := readyCluster()
	o.spec.Containerd.Registries = []bootstrapv1.Registry{{
		Host: "registry.corp.example:5000",
		Mirrors: []bootstrapv1.RegistryMirror{{URL: "https://cache.corp.example",
			RegistryAccess: bootstrapv1.RegistryAccess{InsecureSkipVerify: true}}},
		RegistryAccess: bootstrapv1.RegistryAccess{
			CA:          &bootstrapv1.CABundle{ConfigMap: &bootstrapv1.ConfigMapKey{Name: "corp-ca", Key: "ca.pem"}},
			Credentials: &bootstrapv1.SecretName{Name: "corp-pull"},
		},
	}}
	f := newFixture(t, o)
	c := f.waitReason(t, bootstrapv1.RegistryReferenceNotAvailableReason)
	g.Expect(c.Message).To(ContainSubstring("corp-ca"))

	g.Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "corp-ca", Namespace: f.ns},
		Data: map[string]string{"ca.pem": string(ca)}})).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "corp-pull", Namespace: f.ns},
		Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte("robot"), "password": []byte("pull-s3cr3t")}})).To(Succeed())
	doc := dataDocument(g, f.dataSecret(t).Data["value"])
	g.Expect(doc.Containerd.Config).To(ContainSubstring(`config_path = 'C:\Program Files\containerd\certs.d'`))
	g.Expect(doc.Containerd.Config).To(ContainSubstring("password = 'pull-s3cr3t'"))
	files := map[string]string{}
	for _, h := range doc.Containerd.Hosts {
		content, err := base64.StdEncoding.DecodeString(h.Content)
		g.Expect(err).NotTo(HaveOccurred())
		files[h.Path] = string(content)
	}
	dir := `C:\Program Files\containerd\certs.d\registry.corp.example_5000_\`
	g.Expect(files).To(HaveKeyWithValue(dir+"ca.crt", string(ca)))
	g.Expect(files).To(HaveKeyWithValue(dir+"hosts.toml", ContainSubstring(`[host."https://cache.corp.example"]`)))
	g.Eventually(func(g Gomega) []string {
		return warningEvents(g, f, bootstrapv1.InsecureRegistryReason)
	}).Should(ConsistOf(ContainSubstring("registry registry.corp.example:5000 mirror https://cache.corp.example")))
	for _, msg := range append(warningEvents(g, f, bootstrapv1.RegistryReferenceNotAvailableReason), f.get(g).Status.Conditions[0].Message) {
		g.Expect(msg).NotTo(ContainSubstring("pull-s3cr3t"))
	}
}

// TestDomainJoinCredentials: the activeDirectory credentials Secret is read from the config's
// namespace; while it is missing the config says so by name; once it exists the data carries
// the domain join.
func TestDomainJoinCredentials(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	o := readyCluster()
	o.spec.ActiveDirectory = &bootstrapv1.ActiveDirectory{Domain: "corp.example.com",
		OrganizationalUnit: "OU=Kubernetes,DC=corp,DC=example,DC=com", Credentials: &bootstrapv1.SecretName{Name: "domain-join"}}
	f := newFixture(t, o)
	c := f.waitReason(t, bootstrapv1.DomainCredentialsNotAvailableReason)
	g.Expect(c.Message).To(ContainSubstring("domain-join"))

	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "domain-join", Namespace: f.ns},
		Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte(`CORP\svc-join`), "password": []byte("j0in-s3cr3t")}})).To(Succeed())
	doc := dataDocument(g, f.dataSecret(t).Data["value"])
	// accountNotBefore is the Machine's creation: an older account of the node's name is stale.
	m := &clusterv1.Machine{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(f.machine), m)).To(Succeed())
	g.Expect(doc.Domain).To(Equal(&userdata.DocDomain{Name: "corp.example.com", OrganizationalUnit: "OU=Kubernetes,DC=corp,DC=example,DC=com",
		Username: `CORP\svc-join`, Password: "j0in-s3cr3t", AccountNotBefore: m.CreationTimestamp.UTC().Format(time.RFC3339)}))
	for _, cond := range f.get(g).Status.Conditions {
		g.Expect(cond.Message).NotTo(ContainSubstring("j0in-s3cr3t"))
	}
}
