package guest_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Microsoft/hcsshim/osversion"
	"github.com/go-logr/logr/testr"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	infraguest "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/guestnet"
	"github.com/capwin/capwin/test/framework/harness/guest"
)

// TestNetworkStep: a cloudbase-init guest applies the network document its hypervisor delivered
// (routes with their metric, the MTU of both families, the computer's suffix search list) in the
// network step, before the steps that use the network; without a document the step does nothing,
// and a document naming an adapter the VM lacks fails the step with the script's words.
func TestNetworkStep(t *testing.T) {
	const mac = "00:50:56:00:00:01"
	nics := []infraguest.NIC{{MAC: mac, Addresses: []string{"10.0.0.21/24"}, Gateway4: "10.0.0.1", MTU: 1400,
		Routes:        []infraguest.Route{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50}},
		SearchDomains: []string{"corp.example.com", "example.com"}}}
	doc, err := infraguest.BuildNetworkDocument(nics)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		doc  []byte
		macs []string
		want guestnet.Network
		err  string
	}{
		"applied": {doc: doc, macs: []string{"00-50-56-00-00-01"}, want: guestnet.Network{
			Adapters: []guestnet.Adapter{{MAC: infraguest.NormalizeMAC(mac), Addresses: []string{"10.0.0.21/24"},
				Routes: []infraguest.LaunchRoute{{To: "0.0.0.0/0", Via: "10.0.0.1"}, {To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50}},
				MTU4:   1400, MTU6: 1400}},
			SuffixSearchList: []string{"corp.example.com", "example.com"}}},
		"no document":     {},
		"unknown adapter": {doc: doc, macs: []string{"00:50:56:00:00:09"}, err: "no network adapter has the MAC address 00-50-56-00-00-01"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data := render(t, node{format: userdata.FormatCloudConfig, name: "win-net-1", token: "abcdef.0123456789abcdef",
				caHash: "sha256:" + strings.Repeat("0", 64), endpoint: "127.0.0.1:6443"})
			rec := &recorder{}
			g := guest.Boot(t.Context(), guest.Config{UserData: data, Build: osversion.LTSC2022, Address: "10.9.0.5", Hostname: "win-net-1",
				Channel: rec, Network: tc.doc, MACs: tc.macs, Faults: guest.Faults{FailAt: "time"}, Log: testr.New(t)})
			t.Cleanup(g.Stop)
			waitDone(t, g, time.Minute)
			want := "time"
			if tc.err != "" {
				want = "network"
			}
			var stepErr *guest.StepError
			if err := g.Err(); !errors.As(err, &stepErr) || stepErr.Step != want || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Err() = %v, want a failure at %s %q", err, want, tc.err)
			}
			if got := g.Network(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("network %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestNetworkAppliedTwiceChangesNothing: the launcher and then the bootstrap's network step apply
// one document (a guest with guestCredentialsRef); the second application changes nothing.
func TestNetworkAppliedTwiceChangesNothing(t *testing.T) {
	l, err := infraguest.NewLaunch("win", []infraguest.NIC{{MAC: "00:50:56:00:00:01", Addresses: []string{"10.0.0.21/24"},
		Gateway4: "10.0.0.1", Nameservers: []string{"10.0.0.2"}, MTU: 9000, SearchDomains: []string{"example.com"},
		Routes: []infraguest.Route{{To: "10.20.0.0/16", Via: "10.0.0.254", Metric: 50}}}}, infraguest.LaunchStatus{})
	if err != nil {
		t.Fatal(err)
	}
	var n guestnet.Network
	if err := n.Apply(l.NetworkSettings, nil); err != nil {
		t.Fatal(err)
	}
	once := n
	if err := n.Apply(l.NetworkSettings, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(n, once) || len(n.Adapters) != 1 || len(n.Adapters[0].Routes) != 2 {
		t.Errorf("after a second application %+v, want %+v", n, once)
	}
}
