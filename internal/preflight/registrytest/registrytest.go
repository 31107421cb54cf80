// Package registrytest serves OCI registries in-process for tests of the preflight check: a public
// one and one that wants a user and password, both over TLS with a certificate of their own CA.
package registrytest

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The builds the tests use.
var (
	LTSC2022 = v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.20348.2700"}
	LTSC2025 = v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1742"}
	Linux    = v1.Platform{OS: "linux", Architecture: "amd64"}
)

// Registries are a public and a private registry.
type Registries struct {
	Public, Private *httptest.Server
	// CAFile is the PEM of the CA both serve under.
	CAFile string
	// User and Password open the private registry.
	User, Password string
}

// Start serves both registries until the test ends.
func Start(t testing.TB) *Registries {
	r := &Registries{User: "puller", Password: "s3cret-pull"}
	r.Public = serve(t, registry.New(quiet))
	inner := registry.New(quiet)
	r.Private = serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != r.User || p != r.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, req)
	}))
	r.CAFile = filepath.Join(t.TempDir(), "registry-ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Public.Certificate().Raw})
	if err := os.WriteFile(r.CAFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// Host is the host:port of a test server, as image references name it.
func Host(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "https://") }

// Push writes one image per platform at ref (repository:tag on srv): a single image for one
// platform, else an image index; describe puts the platforms into the index's entries (as
// docker buildx and crane do), else a reader must open each image's config to learn it.
func (r *Registries) Push(t testing.TB, srv *httptest.Server, ref string, describe bool, platforms ...v1.Platform) string {
	t.Helper()
	full := Host(srv) + "/" + ref
	tag, err := name.ParseReference(full)
	if err != nil {
		t.Fatal(err)
	}
	opts := []remote.Option{remote.WithTransport(srv.Client().Transport),
		remote.WithAuth(&authn.Basic{Username: r.User, Password: r.Password})}
	if len(platforms) == 1 {
		if err := remote.Write(tag, image(t, platforms[0]), opts...); err != nil {
			t.Fatal(err)
		}
		return full
	}
	var idx v1.ImageIndex = empty.Index
	for _, p := range platforms {
		d := v1.Descriptor{}
		if describe {
			d.Platform = &p
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: image(t, p), Descriptor: d})
	}
	if err := remote.WriteIndex(tag, idx, opts...); err != nil {
		t.Fatal(err)
	}
	return full
}

func image(t testing.TB, p v1.Platform) v1.Image {
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.OSVersion = p.OS, p.Architecture, p.OSVersion
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

var quiet = registry.Logger(log.New(io.Discard, "", 0))

// serve serves h over TLS until the test ends, without logging refused handshakes (the tests
// make them on purpose).
func serve(t testing.TB, h http.Handler) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}
