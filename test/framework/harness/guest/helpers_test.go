package guest_test

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/test/framework/harness/guest"
	"github.com/capwin/capwin/test/framework/harness/workload"
)

// recorder is a Channel that keeps what the guest sent, checking each report as the
// infrastructure provider would read it.
type recorder struct {
	mu      sync.Mutex
	address string
	keys    map[string]bool
	reports []guest.Report
	errs    []error
}

func (r *recorder) Address(_ context.Context, ip string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.address = ip
	return nil
}

func (r *recorder) Status(_ context.Context, s userdata.Status, report []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		r.keys = map[string]bool{}
	}
	r.keys[s.GuestinfoKey] = true
	var rep guest.Report
	if err := json.Unmarshal(report, &rep); err != nil {
		r.errs = append(r.errs, err)
	}
	if len(report) > s.MaxBytes {
		r.errs = append(r.errs, fmt.Errorf("report of %d bytes exceeds %d", len(report), s.MaxBytes))
	}
	r.reports = append(r.reports, rep)
	return nil
}

func (r *recorder) snapshot() (string, []guest.Report, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.address, append([]guest.Report(nil), r.reports...), append([]error(nil), r.errs...)
}

// createToken creates a bootstrap token Secret shaped as capwin's bootstrap provider creates it.
func createToken(t *testing.T, cs kubernetes.Interface, ttl time.Duration) string {
	t.Helper()
	token, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		t.Fatal(err)
	}
	m := bootstraputil.BootstrapTokenRegexp.FindStringSubmatch(token)
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstraputil.BootstrapTokenSecretName(m[1]), Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data: map[string][]byte{
			bootstrapapi.BootstrapTokenIDKey:               []byte(m[1]),
			bootstrapapi.BootstrapTokenSecretKey:           []byte(m[2]),
			bootstrapapi.BootstrapTokenExpirationKey:       []byte(time.Now().UTC().Add(ttl).Format(time.RFC3339)),
			bootstrapapi.BootstrapTokenUsageSigningKey:     []byte("true"),
			bootstrapapi.BootstrapTokenUsageAuthentication: []byte("true"),
			bootstrapapi.BootstrapTokenExtraGroupsKey:      []byte(workload.BootstrapTokenGroup),
		},
	}
	if _, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return token
}

// node is what one test node's user data says.
type node struct {
	format   userdata.Format
	name     string
	token    string
	caHash   string
	hyperV   bool
	gzipped  bool
	endpoint string
	timezone string
	users    []userdata.User
	// registries, when set, replace the default (none) and the pause image comes from pause.
	registries []userdata.Registry
	pause      string
	domain     *userdata.Domain
	// disks and containerdRoot/State put containerd on data disks.
	disks                         []userdata.Disk
	containerdRoot, containerdSta string
	// kubeletConfig is a JSON object of KubeletConfiguration fields ("" for none).
	kubeletConfig string
	// containerd is a containerd archive to download (binaries.containerd; nil: the image's).
	containerd *userdata.Download
	// prePull is the images pulled before the join (nil: none).
	prePull *userdata.PrePull
}

// render returns the user data capwin's bootstrap provider would render for n, as the
// hypervisor's datasource hands it to cloudbase-init (gzip stays, as with gzip+base64 guestinfo).
func render(t *testing.T, n node) []byte {
	t.Helper()
	data, err := userdata.Render(userdata.Input{
		Format: n.format, NodeName: n.name, KubernetesVersion: "v1.36.3",
		Join: userdata.Join{
			APIServerEndpoint: n.endpoint, Token: n.token, CACertHashes: []string{n.caHash},
			CRISocket: "npipe:////./pipe/containerd-containerd",
		},
		Labels:               map[string]string{"capwin.io/pool": n.name},
		Taints:               []userdata.Taint{{Key: "os", Value: "windows", Effect: "NoSchedule"}},
		PauseImage:           cmp.Or(n.pause, "registry.k8s.io/pause:3.10"),
		Registries:           n.registries,
		Domain:               n.domain,
		Disks:                n.disks,
		ContainerdRoot:       n.containerdRoot,
		ContainerdState:      n.containerdSta,
		HyperVIsolation:      n.hyperV,
		CNI:                  userdata.CNI{Plugin: "calico", VXLANVNI: 4096, VXLANPort: 4789},
		Binaries:             userdata.Binaries{Directory: `C:\k`, Containerd: n.containerd},
		Files:                []userdata.File{{Path: `C:\k\hello.txt`, Content: "hello\n"}},
		PreJoinCommands:      []string{"Write-Output before"},
		PostJoinCommands:     []string{"Write-Output after"},
		Timezone:             n.timezone,
		Users:                n.users,
		KubeletConfiguration: []byte(n.kubeletConfig),
		PrePull:              n.prePull,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !n.gzipped {
		return data
	}
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(data)
	_ = w.Close()
	return buf.Bytes()
}

func eventually(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	begin := time.Now()
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	t.Logf("%s after %v", what, time.Since(begin).Round(time.Millisecond))
}

func waitDone(t *testing.T, g *guest.Guest, timeout time.Duration) {
	t.Helper()
	select {
	case <-g.Done():
	case <-time.After(timeout):
		t.Fatalf("the guest's bootstrap did not finish within %v", timeout)
	}
}

// auditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type auditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource, Namespace, Name, Subresource string
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// audited returns the users that successfully did verb on resource/name.
func audited(t *testing.T, path, verb, resource, name string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var users []string
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		var e auditEvent
		if json.Unmarshal(s.Bytes(), &e) != nil {
			continue
		}
		if e.Verb == verb && e.ObjectRef.Resource == resource && e.ObjectRef.Name == name &&
			e.ObjectRef.Subresource == "" && e.ResponseStatus.Code/100 == 2 {
			users = append(users, e.User.Username)
		}
	}
	return users
}

func reportSteps(reports []guest.Report) string {
	var parts []string
	for _, r := range reports {
		parts = append(parts, r.Step+":"+r.State)
	}
	return strings.Join(parts, " ")
}
