package guest

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/cluster-api/bootstrap/kubeadm/pkg/types/upstreamv1beta4"

	"github.com/capwin/capwin/test/framework/guestjoin"
)

// discoveryRetry is how long discovery waits between attempts (kubeadm waits 5s; the harness
// wants a quick join once the token is signed).
const discoveryRetry = time.Second

// discover is kubeadm's bootstrap-token discovery. cluster-info is read anonymously without
// trusting the server; its kubeconfig is trusted only when the token's detached JWS signature
// (added by the controller-manager's bootstrap signer) verifies with the token secret and its
// CA's public key matches a pin. It retries until ctx ends and returns the CA.
func (s *script) discover(ctx context.Context, bt *upstreamv1beta4.BootstrapTokenDiscovery, out func(string)) ([]byte, error) {
	d, err := guestjoin.ParseDiscovery(bt)
	if err != nil {
		return nil, err
	}
	last := ""
	for {
		ca, err := d.ClusterInfoCA(ctx, s.g.clusterInfo)
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

// clusterInfo reads kube-public/cluster-info without credentials: its kubeconfig and the rest
// of its data (the JWS signatures).
func (g *Guest) clusterInfo(ctx context.Context, cfg *rest.Config) (string, map[string]string, error) {
	cs, closeConns, err := g.newClient(cfg)
	if err != nil {
		return "", nil, err
	}
	defer closeConns()
	return guestjoin.ReadClusterInfo(ctx, cs)
}
