package hypervisor

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

func TestSpecOf(t *testing.T) {
	timeout := &metav1.Duration{}
	creds := &infrav1.SecretReference{Name: "admin"}
	hv := &infrav1.HyperVMachine{Spec: infrav1.HyperVMachineSpec{
		OS: infrav1.OSLinux, PowerOffMode: infrav1.PowerOffTrySoft, GuestSoftPowerOffTimeout: timeout,
		GuestCredentialsRef: creds,
		Network:             []infrav1.HyperVNetworkDevice{{DHCP4: true}, {NetworkName: "Internal"}},
	}}
	vc := &infrav1.VCenterMachine{Spec: infrav1.VCenterMachineSpec{
		OS: infrav1.OSLinux, PowerOffMode: infrav1.PowerOffTrySoft, GuestSoftPowerOffTimeout: timeout,
		GuestCredentialsRef: creds,
		Network:             []infrav1.NetworkDevice{{DHCP4: true}, {NetworkName: "VM Network"}},
	}}
	for _, c := range []struct {
		obj     Object
		network []infrav1.NetworkDevice
	}{
		{hv, []infrav1.NetworkDevice{{DHCP4: true}, {NetworkName: "Internal"}}},
		{vc, vc.Spec.Network},
	} {
		want := MachineSpec{OS: infrav1.OSLinux, PowerOffMode: infrav1.PowerOffTrySoft, GuestSoftPowerOffTimeout: timeout,
			GuestCredentialsRef: creds, Network: c.network}
		if got := SpecOf(c.obj); !reflect.DeepEqual(got, want) {
			t.Errorf("SpecOf(%T) = %+v, want %+v", c.obj, got, want)
		}
	}
}
