package v1beta1

import "testing"

func TestHostCredentials(t *testing.T) {
	spec := HyperVClusterSpec{CredentialsRef: SecretReference{Name: "win1-hyperv"}}
	if got := spec.HostCredentials(HyperVHost{Name: "hv1"}); got != "win1-hyperv" {
		t.Errorf("host without credentialsRef: got %q, want the cluster's", got)
	}
	if got := spec.HostCredentials(HyperVHost{Name: "hv2", CredentialsRef: SecretReference{Name: "own"}}); got != "own" {
		t.Errorf("host with credentialsRef: got %q, want its own", got)
	}
}
