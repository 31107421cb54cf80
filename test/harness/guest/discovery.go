package guest

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
)

// discoveryRetry is how long discovery waits between attempts (kubeadm waits 5s; the harness
// wants a quick join once the token is signed).
const discoveryRetry = time.Second

// discover is kubeadm's bootstrap-token discovery. cluster-info is read anonymously without
// trusting the server; its kubeconfig is trusted only when the token's detached JWS signature
// (added by the controller-manager's bootstrap signer) verifies with the token secret and its
// CA's public key matches a pin. It retries until ctx ends and returns the CA.
func (s *script) discover(ctx context.Context, bt *upstreamv1beta4.BootstrapTokenDiscovery, out func(string)) ([]byte, error) {
	m := bootstraputil.BootstrapTokenRegexp.FindStringSubmatch(bt.Token)
	if len(m) != 3 {
		return nil, fmt.Errorf("the bootstrap token does not match the pattern %s", bootstrapapi.BootstrapTokenPattern)
	}
	id, secret := m[1], m[2]
	pins := map[string]bool{}
	for _, h := range bt.CACertHashes {
		hexSum, ok := strings.CutPrefix(strings.ToLower(h), "sha256:")
		if b, err := hex.DecodeString(hexSum); !ok || err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("invalid CA certificate hash %q: want sha256:<64 hex digits>", h)
		}
		pins[hexSum] = true
	}
	if len(pins) == 0 && !bt.UnsafeSkipCAVerification {
		return nil, errors.New("discovery.bootstrapToken.caCertHashes is empty and unsafeSkipCAVerification is false")
	}
	endpoint, err := endpointURL(bt.APIServerEndpoint)
	if err != nil {
		return nil, err
	}
	last := ""
	for {
		ca, err := s.g.clusterInfoCA(ctx, endpoint, id, secret, pins)
		if err == nil {
			out(fmt.Sprintf("[discovery] cluster-info is signed by the token and its CA is pinned; using API server %q", bt.APIServerEndpoint))
			return ca, nil
		}
		if err.Error() != last {
			out(fmt.Sprintf("[discovery] %v; will try again", err))
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(discoveryRetry):
		}
	}
}

// clusterInfoCA does one discovery attempt.
func (g *Guest) clusterInfoCA(ctx context.Context, endpoint, id, secret string, pins map[string]bool) ([]byte, error) {
	insecure := &rest.Config{Host: endpoint, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	kubeconfig, sigs, err := g.clusterInfo(ctx, insecure)
	if err != nil {
		return nil, fmt.Errorf("failed to request cluster-info: %w", err)
	}
	sig, ok := sigs[bootstrapapi.JWSSignatureKeyPrefix+id]
	if !ok {
		return nil, fmt.Errorf("cluster-info has no JWS signature for token ID %q (the token is unknown, expired or not signed yet)", id)
	}
	if !verifyDetachedJWS(sig, kubeconfig, id, secret) {
		return nil, fmt.Errorf("the JWS signature of cluster-info for token ID %q does not verify with the token secret; this API server cannot be trusted", id)
	}
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil || len(cfg.Clusters) != 1 {
		return nil, fmt.Errorf("cluster-info's kubeconfig does not hold exactly one cluster (%v)", err)
	}
	var ca []byte
	for _, c := range cfg.Clusters {
		ca = c.CertificateAuthorityData
	}
	certs, err := certutil.ParseCertsPEM(ca)
	if err != nil {
		return nil, fmt.Errorf("cluster-info's CA: %w", err)
	}
	if len(pins) > 0 && !pinned(certs, pins) {
		return nil, errors.New("the cluster CA in cluster-info does not match any of the pinned public keys (caCertHashes)")
	}
	// The CA is trusted now: read cluster-info again over verified TLS, as kubeadm does.
	secure := &rest.Config{Host: endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	again, _, err := g.clusterInfo(ctx, secure)
	if err != nil {
		return nil, fmt.Errorf("failed to request cluster-info over TLS verified by the pinned CA: %w", err)
	}
	if again != kubeconfig {
		return nil, errors.New("cluster-info changed between the unverified and the verified request")
	}
	return ca, nil
}

func pinned(certs []*x509.Certificate, pins map[string]bool) bool {
	for _, c := range certs {
		sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
		if pins[hex.EncodeToString(sum[:])] {
			return true
		}
	}
	return false
}

// clusterInfo reads kube-public/cluster-info without credentials: its kubeconfig and the rest
// of its data (the JWS signatures).
func (g *Guest) clusterInfo(ctx context.Context, cfg *rest.Config) (string, map[string]string, error) {
	cs, closeConns, err := g.newClient(cfg)
	if err != nil {
		return "", nil, err
	}
	defer closeConns()
	cm, err := cs.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err != nil {
		return "", nil, err
	}
	kubeconfig, ok := cm.Data[bootstrapapi.KubeConfigKey]
	if !ok {
		return "", nil, errors.New("cluster-info has no kubeconfig")
	}
	return kubeconfig, cm.Data, nil
}
