package guest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509/pkix"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"

	"github.com/capwin/capwin/test/framework/guestjoin"
)

// tlsBootstrap is the kubelet's TLS bootstrap: with the bootstrap kubeconfig kubeadm wrote, it
// asks for a client certificate for system:node:<name> (signer kube-apiserver-client-kubelet)
// and waits until the controller-manager approves (csrapproving, authorised by kubeadm's
// RBAC) and signs it. It writes the certificate and the kubelet's kubeconfig and returns the
// REST config of the node's own identity.
func (g *Guest) tlsBootstrap(ctx context.Context, name string, flags guestjoin.KubeletFlags) (*rest.Config, error) {
	data, ok := g.fs.read(flags.BootstrapKubeconfig)
	if !ok {
		return nil, fmt.Errorf("kubelet: no bootstrap kubeconfig at %s", flags.BootstrapKubeconfig)
	}
	boot, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("kubelet: bootstrap kubeconfig: %w", err)
	}
	boot.UserAgent = "kubelet (windows/amd64) tls-bootstrap"
	cs, closeConns, err := g.newClient(boot)
	if err != nil {
		return nil, err
	}
	defer closeConns()

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	request, err := certutil.MakeCSR(key, &pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}}, nil, nil)
	if err != nil {
		return nil, err
	}
	// An ECDSA key signs; it does not encipher: the kubelet asks for exactly these usages.
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	var reqName string
	var reqUID types.UID
	for {
		reqName, reqUID, err = csr.RequestCertificateWithContext(ctx, cs, request, "", certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
		if err == nil {
			break
		}
		g.cfg.Log.V(1).Info("kubelet: certificate request failed; retrying", "err", err.Error())
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("kubelet: cannot create a certificate signing request: %w", err)
		case <-time.After(time.Second):
		}
	}
	certPEM, err := csr.WaitForCertificate(ctx, cs, reqName, reqUID)
	if err != nil {
		return nil, fmt.Errorf("kubelet: certificate signing request %s was not approved and signed: %w", reqName, err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, err
	}
	g.fs.write(flags.CertDir+`\kubelet-client-current.pem`, append(append([]byte(nil), certPEM...), keyPEM...))

	// The kubeconfig embeds the credentials (the real kubelet points at the .pem file), so the
	// harness can use it as it is.
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["default-cluster"] = &clientcmdapi.Cluster{Server: boot.Host, CertificateAuthorityData: boot.CAData}
	cfg.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "default-cluster", AuthInfo: "default-auth"}
	cfg.CurrentContext = "default-context"
	kubeconfig, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, err
	}
	g.fs.write(flags.Kubeconfig, kubeconfig)
	return &rest.Config{Host: boot.Host, TLSClientConfig: rest.TLSClientConfig{CAData: boot.CAData, CertData: certPEM, KeyData: keyPEM}}, nil
}
