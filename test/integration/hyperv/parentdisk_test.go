package hyperv_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/test/framework/hypervsim"
)

// image is an image served over https, by the name example.com (its certificate's; a URL on
// the host itself is refused); client reaches it at the test server.
type image struct {
	url    string // of the image
	client *http.Client
	gets   *atomic.Int32 // downloads
	sha    string
}

// imageServer serves an image over https to host hv3 and counts its downloads.
func imageServer(t *testing.T, data []byte) image {
	t.Helper()
	var gets atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		gets.Add(1)
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	client := srv.Client()
	transport := client.Transport.(*http.Transport).Clone()
	transport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	client.Transport = transport
	host("hv3").SetHTTPClient(client)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	sum := sha256.Sum256(data)
	return image{url: "https://example.com:" + port + "/images/win.vhdx", client: client, gets: &gets, sha: hex.EncodeToString(sum[:])}
}

// TestParentDiskSource: two machines created at once on one host with the same parent disk source
// wait (Cloning, "copying the parent disk") for one download, verified, and both VMs get the copy
// in <diskPath>\parents as their parent; a third machine later reuses it without a download. The
// machine with VM settings has them on its VM, the others keep capwin's defaults.
func TestParentDiskSource(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	img := imageServer(t, []byte("golden image "+randSuffix()))
	h := host("hv3")
	h.SetCopyDelay(time.Second)
	t.Cleanup(func() { h.SetCopyDelay(0) })
	spec := defaultSpec()
	spec.Host, spec.ParentDisk = "hv3", ""
	spec.ParentDiskSource = &infrav1.HyperVParentDiskSource{URL: img.url, SHA256: strings.ToUpper(img.sha)}
	tuned := spec
	tuned.HyperVVMSettings = infrav1.HyperVVMSettings{CheckpointType: infrav1.CheckpointDisabled, AutomaticStartAction: infrav1.StartAlways,
		AutomaticStartDelaySeconds: ptr.To[int32](30), AutomaticStopAction: infrav1.StopShutDown}
	a := f.addMachine(t, "win-parent-a-"+randSuffix(), "", userData, tuned)
	b := f.addMachine(t, "win-parent-b-"+randSuffix(), "", userData, spec)
	g.Eventually(func(g Gomega) {
		c := condition(a.get(g).Status.Conditions, infrav1.VMProvisionedCondition)
		g.Expect(c.Reason).To(Equal(infrav1.CloningReason))
		g.Expect(c.Message).To(ContainSubstring("is copying the parent disk"))
	}, 10*time.Second, 20*time.Millisecond).Should(Succeed())
	ma, mb := a.waitReason(t, infrav1.WaitingForAddressesReason), b.waitReason(t, infrav1.WaitingForAddressesReason)
	g.Expect(h.ParentCopies(img.sha)).To(Equal(1))
	g.Expect(img.gets.Load()).To(BeEquivalentTo(1))

	cached := wire.ParentCachePath(hyperv.DefaultDiskPath, img.sha)
	va, _ := vmOf(h, string(ma.UID))
	vb, _ := vmOf(h, string(mb.UID))
	g.Expect(va.Parent).To(Equal(cached))
	g.Expect(vb.Parent).To(Equal(cached))
	g.Expect(va.Settings).To(Equal(hypervsim.VMSettings{CheckpointType: "Disabled", AutomaticStartAction: "Start", AutomaticStartDelay: 30, AutomaticStopAction: "ShutDown"}))
	g.Expect(vb.Settings).To(Equal(hypervsim.VMSettings{CheckpointType: "Production", AutomaticStartAction: "StartIfRunning", AutomaticStopAction: "TurnOff"}))

	c := f.addMachine(t, "win-parent-c-"+randSuffix(), "", userData, spec)
	mc := c.waitReason(t, infrav1.WaitingForAddressesReason)
	vc, _ := vmOf(h, string(mc.UID))
	g.Expect(vc.Parent).To(Equal(cached))
	g.Expect(h.ParentCopies(img.sha)).To(Equal(1))
	g.Expect(img.gets.Load()).To(BeEquivalentTo(1))
}

// TestParentDiskSourceMismatch: a source whose file has another SHA-256 stops the machine at
// InvalidSpec naming the pinned hash, never the file's own (that would tell a tenant the hash of
// any file the host can read); no VM is created and no file of that hash is left on the host.
func TestParentDiskSourceMismatch(t *testing.T) {
	g := NewWithT(t)
	f := newCluster(t, nil)
	f.provisioned(t)
	img := imageServer(t, []byte("tampered image "+randSuffix()))
	want := strings.Repeat("0", 64)
	spec := defaultSpec()
	spec.Host, spec.ParentDisk = "hv3", ""
	spec.ParentDiskSource = &infrav1.HyperVParentDiskSource{URL: img.url, SHA256: want}
	mc := f.addMachine(t, "win-parent-bad-"+randSuffix(), "", userData, spec)
	m := mc.waitReason(t, infrav1.InvalidSpecReason)
	msg := condition(m.Status.Conditions, infrav1.VMProvisionedCondition).Message
	g.Expect(msg).To(ContainSubstring("does not match the pinned SHA-256 " + want))
	g.Expect(msg).NotTo(ContainSubstring(img.sha), "the file's own hash is told")
	_, ok := vmOf(host("hv3"), string(m.UID))
	g.Expect(ok).To(BeFalse())
	for _, p := range host("hv3").Files() {
		g.Expect(p).NotTo(ContainSubstring(want))
	}
	g.Expect(m.Status.Task).To(BeEmpty())
}
