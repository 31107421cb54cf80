package v1beta1

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// machineObject is what the machine lifecycle reconciler needs of a machine kind.
type machineObject interface {
	metav1.Object
	runtime.Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
	GetMachineStatus() *MachineStatus
	GetProviderID() *string
	GetNetworkDevices() []NetworkDevice
}

var _ = []machineObject{&VCenterMachine{}, &HyperVMachine{}}

func jsonName(f reflect.StructField) string { return strings.Split(f.Tag.Get("json"), ",")[0] }

// HyperVNetworkDevice declares NetworkDevice's fields itself (see its comment); a field added to
// NetworkDevice must be added there too, with the same name, type and JSON name.
func TestHyperVNetworkDeviceMirrorsNetworkDevice(t *testing.T) {
	shared, hyperV := reflect.TypeFor[NetworkDevice](), reflect.TypeFor[HyperVNetworkDevice]()
	for i := range shared.NumField() {
		want := shared.Field(i)
		got, ok := hyperV.FieldByName(want.Name)
		switch {
		case !ok:
			t.Errorf("HyperVNetworkDevice lacks NetworkDevice's field %s", want.Name)
		case got.Type != want.Type || jsonName(got) != jsonName(want):
			t.Errorf("HyperVNetworkDevice.%s is %s %q, NetworkDevice's is %s %q", want.Name, got.Type, jsonName(got), want.Type, jsonName(want))
		}
	}
	for i := range hyperV.NumField() {
		if f := hyperV.Field(i); f.Name != "VLANID" {
			if _, ok := shared.FieldByName(f.Name); !ok {
				t.Errorf("HyperVNetworkDevice.%s is not a NetworkDevice field: document it as Hyper-V only and exclude it here", f.Name)
			}
		}
	}
}

// fill sets every field of the struct v points to to a non-zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

func TestHyperVNetworkDeviceConversionCopiesEveryField(t *testing.T) {
	var d HyperVNetworkDevice
	fill(reflect.ValueOf(&d).Elem())
	nd := d.NetworkDevice()
	got, src := reflect.ValueOf(nd), reflect.ValueOf(d)
	for i := range got.NumField() {
		name := got.Type().Field(i).Name
		if !reflect.DeepEqual(got.Field(i).Interface(), src.FieldByName(name).Interface()) {
			t.Errorf("NetworkDevice() does not copy %s", name)
		}
	}
}

func TestHyperVMachineGetNetworkDevices(t *testing.T) {
	m := &HyperVMachine{Spec: HyperVMachineSpec{
		Network: []HyperVNetworkDevice{{DHCP4: true}, {NetworkName: "Internal", MACAddr: "00:15:5d:00:00:01"}},
	}}
	got := m.GetNetworkDevices()
	want := []NetworkDevice{{DHCP4: true}, {NetworkName: "Internal", MACAddr: "00:15:5d:00:00:01"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetNetworkDevices() = %+v, want %+v", got, want)
	}
	if (&HyperVMachine{}).GetNetworkDevices() != nil {
		t.Error("no devices must stay nil")
	}
}

func TestSecureBootSettings(t *testing.T) {
	off := false
	cases := []struct {
		name     string
		os       OperatingSystem
		sb       *HyperVSecureBoot
		enabled  bool
		template SecureBootTemplate
	}{
		{"Windows default", "", nil, true, SecureBootMicrosoftWindows},
		{"Linux default", OSLinux, &HyperVSecureBoot{}, true, SecureBootMicrosoftUEFICertificateAuthority},
		{"off", OSLinux, &HyperVSecureBoot{Enabled: &off}, false, SecureBootMicrosoftUEFICertificateAuthority},
		{"template set", OSWindows, &HyperVSecureBoot{Template: SecureBootOpenSourceShieldedVM}, true, SecureBootOpenSourceShieldedVM},
	}
	for _, tc := range cases {
		spec := HyperVMachineSpec{OS: tc.os, SecureBoot: tc.sb}
		if enabled, template := spec.SecureBootSettings(); enabled != tc.enabled || template != tc.template {
			t.Errorf("%s: SecureBootSettings() = %v, %s; want %v, %s", tc.name, enabled, template, tc.enabled, tc.template)
		}
	}
}
