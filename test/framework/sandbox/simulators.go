package sandbox

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25/soap"

	"github.com/capwin/capwin/test/framework/childproc"
)

// Guest OS identifiers and Windows builds of the templates (as in the kind e2e's config).
const (
	linuxGuestID = "ubuntu64Guest"
	ws2022ID     = "windows2019srvNext_64Guest"
	ws2025ID     = "windows2022srvNext_64Guest"
)

// BuildSimulators builds vcsim and the guest simulator of the kind e2e (build tag e2e) from the
// test module under root into dir.
func BuildSimulators(ctx context.Context, root, dir string) (vcsim, sim string, err error) {
	vcsim, sim = filepath.Join(dir, "sandbox-vcsim"), filepath.Join(dir, "sandbox-sim")
	for out, pkg := range map[string]string{vcsim: "./e2e/kind/vcsim", sim: "./e2e/kind/sim"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", "e2e", "-o", out, pkg) //nolint:gosec // G204: the go command on the simulators' packages
		cmd.Dir, cmd.Env = filepath.Join(root, "test"), append(os.Environ(), "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
	}
	return vcsim, sim, nil
}

// startSimulators starts vcsim on a free loopback port with a certificate made here, then the
// guest simulator with two Hyper-V hosts, and waits until the simulator is ready (the templates
// exist).
func (s *Sandbox) startSimulators(ctx context.Context, o Options) error {
	certFile, keyFile := filepath.Join(o.Dir, "vcsim.crt"), filepath.Join(o.Dir, "vcsim.key")
	cert, err := writeServingCert(certFile, keyFile)
	if err != nil {
		return err
	}
	s.Thumbprint = soap.ThumbprintSHA256(cert)
	vcPort, err := freePort()
	if err != nil {
		return err
	}
	healthPort, err := freePort()
	if err != nil {
		return err
	}
	s.VCenter = net.JoinHostPort("127.0.0.1", strconv.Itoa(vcPort))
	hostsFlag, err := s.hypervHosts(cert)
	if err != nil {
		return err
	}
	health := "127.0.0.1:" + strconv.Itoa(healthPort)
	vc, err := childproc.Start(ctx, "vcsim", o.VCSim, s.Logs, "-l", s.VCenter,
		"-tlscert", certFile, "-tlskey", keyFile, "-guest-agent", "http://"+health)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, vc)
	if err := waitFor(ctx, vc, func() bool { c, err := net.Dial("tcp", s.VCenter); return err == nil && c.Close() == nil }); err != nil {
		return fmt.Errorf("vcsim: %w", err)
	}
	sdk := url.URL{Scheme: "https", User: url.UserPassword(s.Username, s.Password), Host: s.VCenter, Path: "/sdk"}
	sim, err := childproc.Start(ctx, "sim", o.Sim, s.Logs, "--kubeconfig", s.Kubeconfig,
		"--vcenter", sdk.String(), "--datacenter", Datacenter, "--resource-pool", ResourcePool, "--endpoint-host", EndpointIP,
		"--template", LinuxTemplate+"="+linuxGuestID, "--template", Windows2022+"="+ws2022ID, "--template", Windows2025+"="+ws2025ID,
		"--windows-build", ws2022ID+"=20348", "--windows-build", ws2025ID+"=26100",
		"--health-addr", health, "--debug-port", "0",
		"--hyperv-hosts", hostsFlag, "--hyperv-username", s.HyperVUsername, "--hyperv-password", s.Password,
		"--hyperv-tls-cert", certFile, "--hyperv-tls-key", keyFile, "--hyperv-switch", HyperVSwitch,
		"--hyperv-disk", HyperVLinuxDisk+"=linux", "--hyperv-disk", HyperV2022Disk+"=20348", "--hyperv-disk", HyperV2025Disk+"=26100")
	if err != nil {
		return err
	}
	s.procs = append(s.procs, sim)
	if err := waitFor(ctx, sim, func() bool { return ready("http://" + health + "/readyz") }); err != nil {
		return fmt.Errorf("guest simulator: %w", err)
	}
	return nil
}

// hypervHosts picks the Hyper-V hosts' ports and returns them as HYPERV_HOSTS (s.HyperVHosts)
// and the simulator's --hyperv-hosts: a YAML flow list of hosts at 127.0.0.1 that trust cert.
func (s *Sandbox) hypervHosts(cert *x509.Certificate) (string, error) {
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
	var hosts []string
	for i := 1; i <= 2; i++ {
		port, err := freePort()
		if err != nil {
			return "", err
		}
		hosts = append(hosts, fmt.Sprintf("{name: hv%d, address: 127.0.0.1, port: %d, caBundle: %s}", i, port, ca))
	}
	s.HyperVHosts = "[" + strings.Join(hosts, ", ") + "]"
	return s.HyperVHosts, nil
}

// writeServingCert writes a self-signed certificate for 127.0.0.1 and its key: vcsim's, and the
// Hyper-V hosts' WinRM certificate, which their caBundle names as its own CA.
func writeServingCert(certFile, keyFile string) (*x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "capwin sandbox vcsim"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// freePort is a loopback port free at the time of asking.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

func ready(u string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(u) //nolint:noctx // a probe with its own timeout
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitFor waits up to two minutes for ok, or until p exits.
func waitFor(ctx context.Context, p *childproc.Child, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for !ok() {
		select {
		case <-p.Done():
			return p.Exited()
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w\n%s", ctx.Err(), p.Tail())
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}
