package v1beta1

import "testing"

func TestHostCredentials(t *testing.T) {
	spec := HyperVClusterSpec{CredentialsRef: HyperVIdentityReference{Kind: HyperVClusterIdentityKind, Name: "hosts"}}
	if got := spec.HostCredentials(HyperVHost{Name: "hv1"}); got != spec.CredentialsRef {
		t.Errorf("host without credentialsRef: got %+v, want the cluster's", got)
	}
	if got := spec.HostCredentials(HyperVHost{Name: "hv2", CredentialsRef: SecretReference{Name: "own"}}); got != (HyperVIdentityReference{Kind: SecretKind, Name: "own"}) {
		t.Errorf("host with credentialsRef: got %+v, want its own Secret", got)
	}
}
