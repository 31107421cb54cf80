package vcenter_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// clusterRules are the VMs of the anti-affinity rules of vcsim's DRS cluster DC0_C0 whose name
// has prefix, by rule name.
func clusterRules(g Gomega, prefix string) map[string][]string {
	c := vc(g)
	cc, err := find.NewFinder(c).ClusterComputeResource(ctx, "/DC0/host/DC0_C0")
	g.Expect(err).NotTo(HaveOccurred())
	var m mo.ClusterComputeResource
	g.Expect(cc.Properties(ctx, cc.Reference(), []string{"configurationEx"}, &m)).To(Succeed())
	out := map[string][]string{}
	for _, r := range m.ConfigurationEx.(*types.ClusterConfigInfoEx).Rule {
		if aa, ok := r.(*types.ClusterAntiAffinityRuleSpec); ok && strings.HasPrefix(aa.Name, prefix) {
			for _, vm := range aa.Vm {
				out[aa.Name] = append(out[aa.Name], vm.Value)
			}
		}
	}
	return out
}

// TestAntiAffinity: two machines of one MachineDeployment with antiAffinity Hard, in vcsim's DRS
// cluster, through the real apiserver: both VMs end in one rule before they run; deleting the
// machines removes the rule.
func TestAntiAffinity(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f := newCluster(t, watchFilter)
	f.machineLabels = map[string]string{clusterv1.MachineDeploymentNameLabel: "win-md-0"}
	spec := defaultSpec()
	spec.Placement.ResourcePool = "/DC0/host/DC0_C0/Resources"
	spec.AntiAffinity = &infrav1.VCenterAntiAffinity{Mode: infrav1.AntiAffinityHard}
	f.addMachine(t, "win-md-0-aa-1", userData, spec)
	first := f.vm
	f.addMachine(t, "win-md-0-aa-2", userData, spec)
	prefix := "capwin-" + f.ns + "-win-md-win-md-0-"

	var ids []string
	for _, vm := range []*infrav1.VCenterMachine{first, f.vm} {
		f.vm = vm
		m := f.waitReason(t, infrav1.WaitingForAddressesReason)
		ids = append(ids, m.Status.VM.ID)
	}
	rules := clusterRules(g, prefix)
	g.Expect(rules).To(HaveLen(1))
	for _, vms := range rules {
		g.Expect(vms).To(ConsistOf(ids))
	}

	for _, vm := range []*infrav1.VCenterMachine{first, f.vm} {
		g.Expect(k8s.Delete(ctx, vm)).To(Succeed())
	}
	for _, vm := range []*infrav1.VCenterMachine{first, f.vm} {
		g.Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(vm), &infrav1.VCenterMachine{}))
		}, 30*time.Second, 50*time.Millisecond).Should(BeTrue())
	}
	g.Expect(clusterRules(g, prefix)).To(BeEmpty(), "no rule outlives its MachineDeployment")
}
