package guest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// testJoin: a gzipped cloud-config user data joins for real, runs and evicts Pods, and stops.
func (f *fixture) testJoin(t *testing.T) {
	t.Parallel()
	ctx, name := t.Context(), "win-a"
	token := createToken(t, f.cs, 15*time.Minute)
	g, rec := f.boot(t, node{format: userdata.FormatCloudConfig, name: name, token: token, gzipped: true},
		osversion.LTSC2022, guest.Faults{}, time.Minute)
	begin := time.Now()
	waitDone(t, g, 90*time.Second)
	if err := g.Err(); err != nil {
		t.Fatalf("join: %v", err)
	}
	t.Logf("joined in %v", time.Since(begin).Round(time.Millisecond))
	if testing.Verbose() {
		log, _ := g.File(userdata.LogFile)
		t.Logf("bootstrap log:\n%s", log)
	}

	address, reports, errs := rec.snapshot()
	var want []string
	for _, s := range guest.Steps {
		want = append(want, s+":Running")
	}
	if got := reportSteps(reports); got != strings.Join(append(want, "finish:Succeeded"), " ") || len(errs) > 0 {
		t.Errorf("reports: %s (errors %v)", got, errs)
	}
	if !rec.keys[userdata.StatusGuestinfoKey] || address == "" {
		t.Errorf("status keys %v, address %q", rec.keys, address)
	}
	checkFiles(t, g)

	n, err := f.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkNode(t, n, name, "10.0.20348", "Windows Server 2022 Datacenter")
	checkIdentity(t, f, g, name, strings.SplitN(token, ".", 2)[0])
	renewed := leaseRenewed(t, f.cs, name)

	pods := runApp(t, f.cs, name)
	evicted := pods[0]
	if err := f.cs.CoreV1().Pods("default").EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: evicted.Name, Namespace: "default"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the evicted Pod to be gone", 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := f.cs.CoreV1().Pods("default").Get(ctx, evicted.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), client(err)
	})
	if users := audited(t, f.c.AuditLog, "delete", "pods", evicted.Name); !slices.Contains(users, "system:node:"+name) {
		t.Errorf("the evicted Pod was deleted by %v, want its kubelet", users)
	}

	g.Stop()
	g.Stop() // idempotent
	after := renewed()
	time.Sleep(3 * time.Second)
	if again := renewed(); !again.Equal(after) {
		t.Errorf("the Lease was renewed after Stop: %v, then %v", after, again)
	}
}

// client passes on errors other than NotFound.
func client(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func checkFiles(t *testing.T, g *guest.Guest) {
	t.Helper()
	if data, ok := g.File(strings.ToUpper(userdata.SentinelPath)); !ok || string(data) != "success\r\n" {
		t.Errorf("sentinel: %q, %v", data, ok)
	}
	for _, gone := range []string{`C:\var\lib\capwin\kubeadm-join-config.yaml`, `C:\etc\kubernetes\bootstrap-kubelet.conf`} {
		if _, ok := g.File(gone); ok {
			t.Errorf("%s is still on disk", gone)
		}
	}
	for _, present := range []string{`C:\etc\kubernetes\kubelet.conf`, `C:\var\lib\kubelet\config.yaml`, `C:\etc\kubernetes\pki\ca.crt`,
		`C:\Program Files\containerd\config.toml`, `C:\var\lib\capwin\prejoin-00.ps1`, `C:\var\lib\capwin\postjoin-00.ps1`, "c:/k/hello.txt"} {
		if _, ok := g.File(present); !ok {
			t.Errorf("%s is missing", present)
		}
	}
}

func checkNode(t *testing.T, n *corev1.Node, name, build, osImage string) {
	t.Helper()
	for k, v := range map[string]string{
		"capwin.io/pool": name, corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64",
		corev1.LabelHostname: name, corev1.LabelWindowsBuild: build,
	} {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if !slices.ContainsFunc(n.Spec.Taints, func(tn corev1.Taint) bool {
		return tn.Key == "os" && tn.Value == "windows" && tn.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("taints %v lack os=windows:NoSchedule", n.Spec.Taints)
	}
	if n.Spec.ProviderID != "" {
		t.Errorf("providerID %q: only capwin's infrastructure provider may set it", n.Spec.ProviderID)
	}
	info := n.Status.NodeInfo
	if info.OperatingSystem != "windows" || info.OSImage != osImage || !strings.HasPrefix(info.KernelVersion, build+".") ||
		info.KubeletVersion != "v1.36.3" || !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://") {
		t.Errorf("nodeInfo %+v", info)
	}
	if len(n.Status.Addresses) == 0 || n.Status.Addresses[0].Type != corev1.NodeInternalIP || !nodeReady(n) {
		t.Errorf("addresses %v, conditions %v", n.Status.Addresses, n.Status.Conditions)
	}
}

// checkIdentity: KCM approved and signed the guest's CSR, and the Node was created with the
// resulting certificate (the audit log's user), which the written kubeconfig carries.
func checkIdentity(t *testing.T, f *fixture, g *guest.Guest, name, tokenID string) {
	t.Helper()
	csrs, err := f.cs.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(csrs.Items, func(c certificatesv1.CertificateSigningRequest) bool {
		return c.Spec.Username == "system:bootstrap:"+tokenID
	})
	if i < 0 {
		t.Fatalf("no CSR by system:bootstrap:%s", tokenID)
	}
	csr := csrs.Items[i]
	approved := slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved && c.Reason == "AutoApproved"
	})
	if !approved || len(csr.Status.Certificate) == 0 || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Errorf("CSR %s: signer %s, conditions %v, %d bytes of certificate", csr.Name, csr.Spec.SignerName, csr.Status.Conditions, len(csr.Status.Certificate))
	}
	if users := audited(t, f.c.AuditLog, "create", "nodes", name); !slices.Equal(users, []string{"system:node:" + name}) {
		t.Errorf("Node %s created by %v, want system:node:%s", name, users, name)
	}
	kubeconfig, _ := g.File(`C:\etc\kubernetes\kubelet.conf`)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || review.Status.UserInfo.Username != "system:node:"+name || !slices.Contains(review.Status.UserInfo.Groups, "system:nodes") {
		t.Errorf("kubelet.conf identity: %+v, %v", review, err)
	}
}

// leaseRenewed waits for the node's Lease to be renewed and returns a reader of its renewTime.
func leaseRenewed(t *testing.T, cs kubernetes.Interface, name string) func() time.Time {
	t.Helper()
	renewTime := func() time.Time {
		l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			t.Fatalf("Lease %s: %v", name, err)
		}
		return l.Spec.RenewTime.Time
	}
	first := renewTime()
	eventually(t, "the Lease to be renewed", 10*time.Second, func(context.Context) (bool, error) {
		return renewTime().After(first), nil
	})
	return renewTime
}

// runApp deploys two Windows Pods onto the node and waits until its kubelet runs them.
func runApp(t *testing.T, cs kubernetes.Interface, name string) []corev1.Pod {
	t.Helper()
	labels := map[string]string{"app": name + "-app"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-app", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelOSStable: "windows", "capwin.io/pool": name},
					Tolerations:  []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
					Containers:   []corev1.Container{{Name: "iis", Image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(t.Context(), dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	eventually(t, "2 Running and Ready Pods on "+name, time.Minute, func(ctx context.Context) (bool, error) {
		list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name + "-app"})
		if err != nil {
			return false, err
		}
		pods = nil
		for _, p := range list.Items {
			ready := slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
				return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
			})
			if p.Spec.NodeName == name && p.Status.Phase == corev1.PodRunning && ready && p.Status.PodIP != "" &&
				len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil {
				pods = append(pods, p)
			}
		}
		return len(pods) == 2, nil
	})
	return pods
}
