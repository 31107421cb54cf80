package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capwin/capwin/test/framework/harness"
)

// watch samples, every 2 s, the VMs per owner (a duplicate is two VMs of one object) and when each
// worker Machine was first seen Ready.
type watch struct {
	h    *harness.Harness
	stop context.CancelFunc
	done chan struct{}

	mu         sync.Mutex
	duplicates map[string]int
	created    map[string]time.Time
	readyAt    map[string]time.Time
}

func startWatch(ctx context.Context, h *harness.Harness) *watch {
	ctx, cancel := context.WithCancel(ctx)
	w := &watch{h: h, stop: cancel, done: make(chan struct{}),
		duplicates: map[string]int{}, created: map[string]time.Time{}, readyAt: map[string]time.Time{}}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			w.sample(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	return w
}

// result stops the watch and returns the owners seen with more than one VM and the times from
// creation to Ready.
func (w *watch) result() (duplicates []string, toReady []time.Duration) {
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for owner, n := range w.duplicates {
		duplicates = append(duplicates, fmt.Sprintf("%s: %d VMs", owner, n))
	}
	sort.Strings(duplicates)
	for name, at := range w.readyAt {
		toReady = append(toReady, at.Sub(w.created[name]))
	}
	sort.Slice(toReady, func(i, j int) bool { return toReady[i] < toReady[j] })
	return duplicates, toReady
}

func (w *watch) sample(ctx context.Context) {
	owners, err := vmOwners(ctx, w.h)
	machines := &clusterv1.MachineList{}
	lerr := w.h.Management.Client.List(ctx, machines, client.InNamespace(harness.Namespace),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: Workers})
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		for owner, n := range owners {
			if n > 1 {
				w.duplicates[owner] = max(w.duplicates[owner], n)
			}
		}
	}
	if lerr != nil {
		return
	}
	for _, m := range machines.Items {
		w.created[m.Name] = m.CreationTimestamp.Time
		if _, seen := w.readyAt[m.Name]; !seen && harness.MachineReady(&m) {
			w.readyAt[m.Name] = time.Now()
		}
	}
}

// vmOwners counts the hypervisor's VMs per owner: the vSphere instance UUID capwin sets to the
// object's UID at clone, or the capwin-uid line of a Hyper-V VM's notes. VMs without an owner
// (templates, decoys) are not counted.
func vmOwners(ctx context.Context, h *harness.Harness) (map[string]int, error) {
	owners := map[string]int{}
	if h.Provider() == harness.HyperV {
		for _, host := range h.HyperV {
			for _, vm := range host.VMs() {
				if uid := noteValue(vm.Notes, "capwin-uid:"); uid != "" {
					owners[uid]++
				}
			}
		}
		return owners, nil
	}
	vms, err := vsphereVMs(ctx, h)
	for _, vm := range vms {
		if vm.Config != nil && !vm.Config.Template && !strings.HasPrefix(vm.Name, "DC0_") {
			owners[vm.Config.InstanceUuid]++
		}
	}
	return owners, err
}

// vsphereVMs reads every VM of vcsim (name, template flag, UUIDs, power), around the faults.
func vsphereVMs(ctx context.Context, h *harness.Harness) ([]mo.VirtualMachine, error) {
	c, err := govmomi.NewClient(ctx, h.VSphere.Server.URL, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	cv, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cv.Destroy(context.WithoutCancel(ctx)) }()
	var vms []mo.VirtualMachine
	err = cv.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.template", "config.instanceUuid", "config.uuid",
		"runtime.powerState", "config.changeVersion"}, &vms)
	return vms, err
}

// noteValue returns the value of a "prefix..." line of a Hyper-V VM's notes.
func noteValue(notes, prefix string) string {
	for _, line := range strings.Split(notes, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return v
		}
	}
	return ""
}
