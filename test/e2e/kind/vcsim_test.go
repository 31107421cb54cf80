//go:build e2e

package kind

import (
	"context"
	"net"
	"net/url"
	"strings"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"

	"sigs.k8s.io/cluster-api/test/framework"
)

// vcsimPort is the port vcsim listens on in its Pod (test/e2e/data/simulators.yaml).
const vcsimPort = 8989

// vcsimMachineVMs lists the names of the VMs in vcsim that are neither templates nor VMs of
// vcsim's own model (DC0_*): the VMs capwin created.
func vcsimMachineVMs(ctx context.Context, proxy framework.ClusterProxy, namespace string) []string {
	var names []string
	for _, vm := range vcsimVMs(ctx, proxy, namespace) {
		names = append(names, vm.Name)
	}
	return names
}

// vcsimVMs reads the VMs capwin created (neither templates nor vcsim's own DC0_*) with their name
// and the given properties. The suite reaches vcsim through a port-forward to its Pod, as it
// reaches the workload clusters.
func vcsimVMs(ctx context.Context, proxy framework.ClusterProxy, namespace string, props ...string) []mo.VirtualMachine {
	pod, err := runningPod(ctx, proxy.GetClient(), namespace, vcsimDeployment)
	Expect(err).ToNot(HaveOccurred())

	u := &url.URL{Scheme: "https", Host: "vcsim", Path: "/sdk", User: url.UserPassword("user", "pass")}
	sc := soap.NewClient(u, true)
	// TLS over the port-forward: soap's own DialTLSContext would dial (and look up) the host itself.
	tr := sc.DefaultTransport()
	tr.DialTLSContext = nil
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialPod(ctx, proxy.GetRESTConfig(), pod, vcsimPort)
	}
	vc, err := vim25.NewClient(ctx, sc)
	Expect(err).ToNot(HaveOccurred(), "connect to vcsim")
	Expect(session.NewManager(vc).Login(ctx, u.User)).To(Succeed())
	defer func() { _ = session.NewManager(vc).Logout(ctx) }()

	v, err := view.NewManager(vc).CreateContainerView(ctx, vc.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	Expect(err).ToNot(HaveOccurred())
	defer func() { _ = v.Destroy(ctx) }()
	var vms []mo.VirtualMachine
	Expect(v.Retrieve(ctx, []string{"VirtualMachine"}, append([]string{"name", "config.template"}, props...), &vms)).To(Succeed())
	var out []mo.VirtualMachine
	for _, vm := range vms {
		if strings.HasPrefix(vm.Name, "DC0_") || (vm.Config != nil && vm.Config.Template) {
			continue
		}
		out = append(out, vm)
	}
	return out
}
