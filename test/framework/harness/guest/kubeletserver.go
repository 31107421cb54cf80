package guest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"time"
)

// kubeletPort is the kubelet's port (the Node's daemonEndpoints).
const kubeletPort = "10250"

// serveKubelet opens the kubelet's port at the guest's address on the workload cluster's node
// network, so that the apiserver's node proxy reaches it: /healthz, and /logs/ when the kubelet
// configuration keeps the log handler on (Node Log Query with enableSystemLogQuery). The kubelet
// serves with a self-signed certificate, as a kubelet without serverTLSBootstrap does. A guest
// without a node network (or already serving) does nothing.
func (g *Guest) serveKubelet(name string, logHandler, logQuery bool) error {
	g.mu.Lock()
	serving := g.serving
	g.serving = true
	g.mu.Unlock()
	if g.cfg.Nodes == nil || g.cfg.Address == "" || serving {
		return nil
	}
	cert, err := selfSigned(name, g.cfg.Address)
	if err != nil {
		return err
	}
	ln, err := g.cfg.Nodes.Listen(net.JoinHostPort(g.cfg.Address, kubeletPort))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	if logHandler {
		mux.Handle("/logs/", g.logHandler(logQuery))
	} else {
		mux.HandleFunc("/logs/", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "logs endpoint is disabled.", http.StatusMethodNotAllowed)
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	// Powering off closes the port (Stop waits for this goroutine before it closes connections).
	context.AfterFunc(g.ctx, func() { _ = srv.Close() })
	g.spawn(func() { _ = srv.ServeTLS(ln, "", "") })
	return nil
}

// selfSigned is the kubelet's own serving certificate for its host name and address.
func selfSigned(name, address string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: name + "@" + now.Format("1136239445")},
		NotBefore:    now.Add(-time.Minute), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{name}, IPAddresses: []net.IP{net.ParseIP(address)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
