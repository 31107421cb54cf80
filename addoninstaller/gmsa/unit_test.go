package gmsa

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestRender fills in every placeholder of the v0.13.0 template and refuses a template with one
// it does not know, naming it.
func TestRender(t *testing.T) {
	g := NewWithT(t)
	pair, err := newCertificate(time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	tpl := readDeploy(t, webhookFile)
	out, err := render(tpl, values("example.com/webhook:1", pair))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).NotTo(ContainSubstring("${"))
	objs, err := objects(out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(9))

	_, err = render(append(tpl, []byte("\n# ${NEW_SETTING} ${ALSO_NEW}\n")...), values("example.com/webhook:1", pair))
	g.Expect(err).To(MatchError("placeholders this installer does not know: ${ALSO_NEW}, ${NEW_SETTING}"))
}

// TestCertificateCheck keeps a good certificate and replaces one that expires within 30 days,
// names another host, does not match its key or is not self-signed.
func TestCertificateCheck(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	good, err := newCertificate(now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(good.check(now)).To(Succeed())
	g.Expect(good.check(now.Add(certLifetime - 29*24*time.Hour))).To(MatchError(ContainSubstring("it expires at 2036-")))

	other, err := newCertificate(now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keyPair{cert: good.cert, key: other.key}.check(now)).To(MatchError(ContainSubstring("private key does not match public key")))
	g.Expect(keyPair{}.check(now)).To(HaveOccurred())
}

// TestFetchRetries retries a download that fails, but not one with the wrong checksum.
func TestFetchRetries(t *testing.T) {
	g := NewWithT(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "mirror syncing", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("body"))
	}))
	t.Cleanup(srv.Close)
	var log bytes.Buffer
	o := &Options{Version: "v1", ManifestsURL: "x", CRDSHA256: "x", WebhookSHA256: "x", WebhookImage: "x",
		Interval: time.Millisecond, Timeout: 10 * time.Second, Log: &log}
	g.Expect(o.defaults()).To(Succeed())
	b, err := fetch(context.Background(), o, srv.URL, sha256Hex([]byte("body")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(b)).To(Equal("body"))
	g.Expect(calls.Load()).To(BeEquivalentTo(3))
	g.Expect(log.String()).To(ContainSubstring("503 Service Unavailable"))

	calls.Store(10)
	_, err = fetch(context.Background(), o, srv.URL, sha256Hex([]byte("other")))
	g.Expect(err).To(MatchError(ContainSubstring("refusing " + srv.URL)))
	g.Expect(calls.Load()).To(BeEquivalentTo(11), "a wrong checksum is not retried")

	o.Timeout = 50 * time.Millisecond
	calls.Store(-1000)
	_, err = fetch(context.Background(), o, srv.URL, sha256Hex([]byte("body")))
	g.Expect(err).To(MatchError(ContainSubstring("giving up after")))
	var permanent permanentError
	g.Expect(errors.As(err, &permanent)).To(BeFalse())
}

// TestOptionsRequired names every missing setting.
func TestOptionsRequired(t *testing.T) {
	err := Install(context.Background(), nil, Options{Version: "v0.13.0", WebhookImage: " "})
	NewWithT(t).Expect(err).To(MatchError("missing settings: GMSA_CRD_SHA256, GMSA_MANIFESTS_URL, GMSA_WEBHOOK_IMAGE, GMSA_WEBHOOK_SHA256"))
}

func readDeploy(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(deploy + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
