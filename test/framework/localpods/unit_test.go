package localpods

import (
	"slices"
	"testing"
)

func TestWithFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
		want []string
	}{
		{[]string{"--leader-elect", "--webhook-port=9443", "--v=2"}, "--webhook-port=1234", []string{"--leader-elect", "--v=2", "--webhook-port=1234"}},
		{[]string{"--webhook-port", "9443", "--v=2"}, "--webhook-port=1234", []string{"--v=2", "--webhook-port=1234"}},
		{[]string{"--v=2"}, "--kubeconfig=/k", []string{"--v=2", "--kubeconfig=/k"}},
		{[]string{"--webhook-port-other=1"}, "--webhook-port=2", []string{"--webhook-port-other=1", "--webhook-port=2"}},
	} {
		if got := withFlag(c.args, c.flag); !slices.Equal(got, c.want) {
			t.Errorf("withFlag(%q, %q) = %q, want %q", c.args, c.flag, got, c.want)
		}
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"POD_NAMESPACE": "cert-manager"}
	if got := expand("--ns=$(POD_NAMESPACE) $(UNKNOWN)", env); got != "--ns=cert-manager $(UNKNOWN)" {
		t.Errorf("expand: %q", got)
	}
}

func TestImageName(t *testing.T) {
	for image, want := range map[string]string{
		"registry.example.com/capwin/cluster-api-controller:v1.14.2": "cluster-api-controller",
		"localhost:5000/capwin-infrastructure:v0.1.0":                "capwin-infrastructure",
		"cert-manager-webhook@sha256:abc":                            "cert-manager-webhook",
		"quay.io/jetstack/cert-manager-controller:v1.21.2@sha256:a":  "cert-manager-controller",
	} {
		if got := imageName(image); got != want {
			t.Errorf("imageName(%q) = %q, want %q", image, got, want)
		}
	}
}
