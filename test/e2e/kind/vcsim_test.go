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
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-api/test/framework"
	inmemoryproxy "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/server/proxy"
)

// vcsimPort is the port vcsim listens on in its Pod (test/e2e/data/simulators.yaml).
const vcsimPort = 8989

// vcsimMachineVMs lists the names of the VMs in vcsim that are neither templates nor VMs of
// vcsim's own model (DC0_*): the VMs capwin created. The suite reaches vcsim through a
// port-forward to its Pod, as it reaches the workload clusters.
func vcsimMachineVMs(ctx context.Context, proxy framework.ClusterProxy, namespace string) []string {
	pods := &corev1.PodList{}
	Expect(proxy.GetClient().List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{simPodLabel: vcsimDeployment})).To(Succeed())
	var pod *corev1.Pod
	for i := range pods.Items {
		if pods.Items[i].Status.Phase == corev1.PodRunning {
			pod = &pods.Items[i]
		}
	}
	Expect(pod).ToNot(BeNil(), "no running vcsim Pod in %s", namespace)
	dialer, err := inmemoryproxy.NewDialer(inmemoryproxy.Proxy{
		Kind: "pods", Namespace: pod.Namespace, ResourceName: pod.Name, KubeConfig: proxy.GetRESTConfig(), Port: vcsimPort,
	})
	Expect(err).ToNot(HaveOccurred())

	u := &url.URL{Scheme: "https", Host: "vcsim", Path: "/sdk", User: url.UserPassword("user", "pass")}
	sc := soap.NewClient(u, true)
	// TLS over the port-forward: soap's own DialTLSContext would dial (and look up) the host itself.
	tr := sc.DefaultTransport()
	tr.DialTLSContext = nil
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialer.DialContextWithAddr(ctx, pod.Name)
	}
	vc, err := vim25.NewClient(ctx, sc)
	Expect(err).ToNot(HaveOccurred(), "connect to vcsim")
	Expect(session.NewManager(vc).Login(ctx, u.User)).To(Succeed())
	defer func() { _ = session.NewManager(vc).Logout(ctx) }()

	v, err := view.NewManager(vc).CreateContainerView(ctx, vc.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	Expect(err).ToNot(HaveOccurred())
	defer func() { _ = v.Destroy(ctx) }()
	var vms []mo.VirtualMachine
	Expect(v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.template"}, &vms)).To(Succeed())
	var names []string
	for _, vm := range vms {
		if strings.HasPrefix(vm.Name, "DC0_") || (vm.Config != nil && vm.Config.Template) {
			continue
		}
		names = append(names, vm.Name)
	}
	return names
}
