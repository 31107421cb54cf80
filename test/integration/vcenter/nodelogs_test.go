package vcenter_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/vmware/govmomi/vim25/types"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/test/framework/scenario"
)

// TestCollectLogsThroughGuestOperations: a log request on a running machine makes the manager copy
// the collector into the guest with VMware Tools and start it once; when Tools lists it as ended,
// its zip is copied out into the machine's node logs Secret (owned by the machine) and both files
// are deleted from the guest. A request naming the cluster's vCenter login as guest login is
// refused without anything started in the guest; so is a machine without a guest login.
func TestCollectLogsThroughGuestOperations(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	f, m, ref := guestRunMachine(t, "win-md-0-logs-"+randSuffix())
	f.guestSecret(t, guestPassword)
	c := vc(g)
	guestSets(g, c, ref, map[string]string{"SET.guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)})
	g.Eventually(func() int { return len(guestOps.Guest(ref.Value).Processes) }, 15*time.Second, 50*time.Millisecond).Should(Equal(1))

	scenario.RequestLogs(t, k8s, m, "r1", "")
	paths := guest.PathsOfCollect("r1")
	var collector int64
	g.Eventually(func(g Gomega) {
		ps := guestOps.Guest(ref.Value).Processes
		g.Expect(ps).To(HaveLen(2))
		g.Expect(ps[1].Arguments).To(Equal(guest.CollectArgs(paths.Script)))
		collector = ps[1].Pid
	}, 15*time.Second, 50*time.Millisecond).Should(Succeed())
	doc, err := guest.ParseCollect(guestOps.Guest(ref.Value).Files[paths.Script])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(doc.Output).To(Equal(paths.Output))
	// While it runs, nothing more is started.
	g.Consistently(func() int { return len(guestOps.Guest(ref.Value).Processes) }, time.Second, 100*time.Millisecond).Should(Equal(2))

	zip := []byte("PK\x05\x06" + strings.Repeat("\x00", 18)) // an empty zip
	guestOps.PutFile(ref.Value, paths.Output, zip)
	guestOps.Exit(ref.Value, collector, 0)
	s := scenario.WaitLogs(t, k8s, m, "r1")
	g.Expect(string(s.Type)).To(Equal(infrav1.NodeLogsSecretType))
	g.Expect(s.Data[infrav1.NodeLogsArchiveKey]).To(Equal(zip))
	g.Expect(string(s.Data[infrav1.NodeLogsMessageKey])).To(ContainSubstring("collected 22 bytes"))
	g.Expect(s.OwnerReferences).To(ContainElement(HaveField("UID", m.UID)))
	g.Expect(guestOps.Guest(ref.Value).Files).NotTo(HaveKey(paths.Output))
	g.Expect(guestOps.Guest(ref.Value).Files).NotTo(HaveKey(paths.Script))

	// The same request is answered once; the hypervisor's login is never sent into the guest.
	g.Consistently(func() int { return len(guestOps.Guest(ref.Value).Processes) }, time.Second, 100*time.Millisecond).Should(Equal(2))
	s = scenario.AskLogs(t, k8s, m, "r2", "vcenter-identity")
	g.Expect(string(s.Data[infrav1.NodeLogsMessageKey])).To(ContainSubstring("hypervisor login"))
	g.Expect(s.Data).NotTo(HaveKey(infrav1.NodeLogsArchiveKey))
	g.Expect(guestOps.Guest(ref.Value).Processes).To(HaveLen(2))

	// A machine without a guest login.
	plain := newCluster(t, watchFilter)
	plain.addMachine(t, "win-md-0-nologin-"+randSuffix(), userData, defaultSpec())
	vm := plain.waitReason(t, infrav1.WaitingForAddressesReason)
	guestSets(g, c, vmRef(vm.Status.VM.ID), map[string]string{"SET.guest.toolsRunningStatus": string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)})
	s = scenario.AskLogs(t, k8s, vm, "r3", "")
	g.Expect(string(s.Data[infrav1.NodeLogsMessageKey])).To(ContainSubstring("no guest login"))
}
