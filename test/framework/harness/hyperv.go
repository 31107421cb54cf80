package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/internal/guestos"
	"github.com/capwin/capwin/test/framework/harness/guest"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/hypervsim/wsman"
)

// Hyper-V hosts of the harness: three simulated hosts behind real WinRM (HTTPS, NTLM), each with
// the golden disks of Images and one external switch.
const (
	HostUser      = "capwin"
	HostPassword  = "Host-pw1"
	VirtualSwitch = "external"
)

// HyperVHost is one simulated Hyper-V host and its WinRM endpoint.
type HyperVHost struct {
	*hypervsim.Host
	Server *wsman.Server
}

// The failover cluster of Options.HyperVFailoverCluster, and where its VMs go.
const (
	HyperVFailoverClusterName = "HVCLU1"
	HyperVStoragePath         = `C:\ClusterStorage\Volume1\capwin`
)

// startHyperV starts n hosts, the nodes of one failover cluster when clustered (the golden disks,
// under C:\ClusterStorage, then on its shared volume).
func startHyperV(n int, clustered bool) ([]HyperVHost, *hypervsim.Cluster, error) {
	if err := hypervsim.CheckScripts(); err != nil {
		return nil, nil, err
	}
	disks := map[string]int64{}
	for _, img := range Images {
		disks[img.HyperVDisk] = 30 << 30
	}
	sims := make([]*hypervsim.Host, n)
	for i := range sims {
		sims[i] = hypervsim.NewHost(fmt.Sprintf("hv%d", i+1), 256<<10, []string{VirtualSwitch}, disks)
		sims[i].SetJobDelay(200 * time.Millisecond)
		addShares(sims[i])
	}
	var cluster *hypervsim.Cluster
	if clustered {
		cluster = hypervsim.NewCluster(HyperVFailoverClusterName, sims...)
	}
	var hosts []HyperVHost
	for _, h := range sims {
		srv, err := h.Serve(map[string]string{HostUser: HostPassword})
		if err != nil {
			stopHyperV(hosts)
			return nil, nil, err
		}
		hosts = append(hosts, HyperVHost{Host: h, Server: srv})
	}
	return hosts, cluster, nil
}

func stopHyperV(hosts []HyperVHost) {
	for _, h := range hosts {
		h.Server.Close()
	}
}

// buildOfDisk maps a VM's golden disk (or a host's copy of it from the share) to the Windows
// build its guest runs.
func buildOfDisk(path string) uint16 {
	for _, img := range Images {
		if strings.EqualFold(img.HyperVDisk, path) || isCopyOf(img, path) {
			return img.Build
		}
	}
	return 0
}

// watchHyperV boots a guest for every running VM whose config drive (the cidata ISO, read by
// its Joliet names as Windows reads it) carries user data, and stops guests of VMs that are off
// or gone.
func (h *Harness) watchHyperV(ctx context.Context) {
	ignored := map[string]bool{}
	poll(ctx, h.opts.GuestPoll, func(context.Context) {
		alive := map[string]bool{}
		for _, host := range h.HyperV {
			for _, vm := range host.VMs() {
				// By id alone: ids are unique across hosts, and a VM a failover cluster moves to
				// another node keeps its guest (a live migration; the simulator does not reboot it).
				key := "hyperv/" + vm.ID
				if vm.State != "Running" {
					continue
				}
				alive[key] = true
				if ignored[key] || h.Guests.known(key) {
					continue
				}
				if len(vm.DVDs) == 0 {
					ignored[key] = true // no config drive: PowerShell Direct delivery is not simulated here
					continue
				}
				files, err := wire.ReadConfigDrive(host.File(vm.DVDs[0]))
				if err != nil || files["user-data"] == nil {
					h.log.Error(err, "config drive without user data", "vm", vm.Name)
					ignored[key] = true
					continue
				}
				hostname, err := localHostname(files["meta-data"])
				if err != nil {
					h.log.Error(err, "config drive meta-data", "vm", vm.Name)
				}
				var macs []string
				for _, nic := range vm.NICs {
					macs = append(macs, nic.MAC)
				}
				// Synthetic SCSI: the disk at location N of controller 0 is target 0, LUN N.
				var disks []guest.Disk
				for _, d := range vm.DataDisks {
					disks = append(disks, guest.Disk{Target: 0, LUN: d.Location})
				}
				h.Guests.boot(key, vm.Name, guest.Config{UserData: files["user-data"], Hostname: hostname, Build: buildOfDisk(vm.Parent),
					Address: h.Guests.address("10.2"), Channel: &hypervChannel{hosts: h.HyperV, id: vm.ID},
					Network: files[guestos.NetworkFile], MACs: macs, Disks: disks})
			}
		}
		h.Guests.stopMissing("hyperv/", alive)
	})
}

// hypervChannel is Hyper-V integration services: the address through the network adapter's
// guest-reported IPs, the bootstrap status as a KVP guest item.
type hypervChannel struct {
	hosts []HyperVHost
	id    string
}

// on runs a guest change on the host that has the VM now (a failover cluster may have moved it).
func (ch *hypervChannel) on(change func(h *hypervsim.Host) error) error {
	var err error
	for _, h := range ch.hosts {
		if err = change(h.Host); err == nil {
			return nil
		}
	}
	return err
}

func (ch *hypervChannel) Address(_ context.Context, ip string) error {
	return ch.on(func(h *hypervsim.Host) error { return h.GuestAddress(ch.id, ip) })
}

func (ch *hypervChannel) Status(_ context.Context, s userdata.Status, report []byte) error {
	return ch.on(func(h *hypervsim.Host) error { return h.GuestKVP(ch.id, s.KVPValue, string(report)) })
}

// countHyperV counts the VMs on all hosts and the files they left (everything but the golden
// disks and the hosts' verified copies of them): a file on a failover cluster's shared volume once, though every node sees it.
func countHyperV(hosts []HyperVHost, cluster *hypervsim.Cluster) (vms, files int) {
	left := map[string]bool{}
	for _, h := range hosts {
		vms += len(h.VMs())
		for _, f := range h.Files() {
			if buildOfDisk(f) != 0 {
				continue
			}
			if cluster == nil || !strings.HasPrefix(f, `c:\clusterstorage\`) {
				f = h.Name + ":" + f
			}
			left[f] = true
		}
	}
	return vms, len(left)
}

func (h *Harness) hypervisorCounts(ctx context.Context) (vms, files int, err error) {
	if h.opts.Provider == HyperV {
		vms, files = countHyperV(h.HyperV, h.HyperVCluster)
		return vms, files, nil
	}
	vms, err = h.VSphere.countVMs(ctx)
	return vms, 0, err
}
