package guestjoin

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"
)

// Discovery is kubeadm's bootstrap-token discovery, checked and parsed.
type Discovery struct {
	Endpoint    string // the apiserver URL
	TokenID     string
	TokenSecret string
	Pins        map[string]bool // hex SHA-256 digests of the CA's public key; empty = not verified
}

// ParseDiscovery checks a bootstrapToken discovery as kubeadm join does before it connects: the
// token's form, the caCertHashes (or unsafeSkipCAVerification) and the endpoint's host:port.
func ParseDiscovery(bt *upstreamv1beta4.BootstrapTokenDiscovery) (Discovery, error) {
	m := bootstraputil.BootstrapTokenRegexp.FindStringSubmatch(bt.Token)
	if len(m) != 3 {
		return Discovery{}, fmt.Errorf("the bootstrap token does not match the pattern %s", bootstrapapi.BootstrapTokenPattern)
	}
	d := Discovery{TokenID: m[1], TokenSecret: m[2], Pins: map[string]bool{}}
	for _, h := range bt.CACertHashes {
		hexSum, ok := strings.CutPrefix(strings.ToLower(h), "sha256:")
		if b, err := hex.DecodeString(hexSum); !ok || err != nil || len(b) != sha256.Size {
			return Discovery{}, fmt.Errorf("invalid CA certificate hash %q: want sha256:<64 hex digits>", h)
		}
		d.Pins[hexSum] = true
	}
	if len(d.Pins) == 0 && !bt.UnsafeSkipCAVerification {
		return Discovery{}, errors.New("discovery.bootstrapToken.caCertHashes is empty and unsafeSkipCAVerification is false")
	}
	var err error
	d.Endpoint, err = EndpointURL(bt.APIServerEndpoint)
	return d, err
}

// EndpointURL turns kubeadm's host:port into the apiserver URL.
func EndpointURL(endpoint string) (string, error) {
	if _, _, err := net.SplitHostPort(endpoint); err != nil {
		return "", fmt.Errorf("apiServerEndpoint %q: %w", endpoint, err)
	}
	return "https://" + endpoint, nil
}

// ClusterInfoReader reads kube-public/cluster-info through cfg: its kubeconfig and all of its
// data (the JWS signatures). ReadClusterInfo does it with a clientset.
type ClusterInfoReader func(ctx context.Context, cfg *rest.Config) (kubeconfig string, data map[string]string, err error)

// ClusterInfoCA does one discovery attempt: cluster-info is read anonymously without trusting
// the server; its kubeconfig is trusted only when the token's detached JWS signature (added by
// the controller-manager's bootstrap signer) verifies with the token secret and its CA's public
// key matches a pin. Then it is read again over TLS verified by that CA, as kubeadm does. It
// returns the CA.
func (d Discovery) ClusterInfoCA(ctx context.Context, read ClusterInfoReader) ([]byte, error) {
	insecure := &rest.Config{Host: d.Endpoint, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	kubeconfig, sigs, err := read(ctx, insecure)
	if err != nil {
		return nil, fmt.Errorf("failed to request cluster-info: %w", err)
	}
	sig, ok := sigs[bootstrapapi.JWSSignatureKeyPrefix+d.TokenID]
	if !ok {
		return nil, fmt.Errorf("cluster-info has no JWS signature for token ID %q (the token is unknown, expired or not signed yet)", d.TokenID)
	}
	if !VerifyDetachedJWS(sig, kubeconfig, d.TokenID, d.TokenSecret) {
		return nil, fmt.Errorf("the JWS signature of cluster-info for token ID %q does not verify with the token secret; this API server cannot be trusted", d.TokenID)
	}
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil || len(cfg.Clusters) != 1 {
		return nil, fmt.Errorf("cluster-info's kubeconfig does not hold exactly one cluster (%v)", err) //nolint:errorlint // shown, not wrapped: err is nil when the kubeconfig loads but holds another number of clusters
	}
	var ca []byte
	for _, c := range cfg.Clusters {
		ca = c.CertificateAuthorityData
	}
	certs, err := certutil.ParseCertsPEM(ca)
	if err != nil {
		return nil, fmt.Errorf("cluster-info's CA: %w", err)
	}
	if len(d.Pins) > 0 && !pinned(certs, d.Pins) {
		return nil, errors.New("the cluster CA in cluster-info does not match any of the pinned public keys (caCertHashes)")
	}
	secure := &rest.Config{Host: d.Endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	again, _, err := read(ctx, secure)
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

// ReadClusterInfo reads kube-public/cluster-info with cs: its kubeconfig and the rest of its data.
func ReadClusterInfo(ctx context.Context, cs kubernetes.Interface) (string, map[string]string, error) {
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
