//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	inmemoryruntime "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/runtime"
	inmemoryserver "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/server"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/internal/guestos"
	simguest "github.com/capwin/capwin/test/framework/harness/guest"
	"github.com/capwin/capwin/test/framework/inmemory"
)

// sim is the simulator's state. One goroutine (the poll loop) owns it.
type sim struct {
	o    options
	log  logr.Logger
	mgmt client.Client
	vc   *vcenter
	mem  inmemoryruntime.Manager
	mux  *inmemoryserver.WorkloadClustersMux

	workloads map[client.ObjectKey]*workload // served workload clusters, by Cluster
	refused   map[client.ObjectKey]string    // Clusters that cannot be served, with the reason (logged once)
	guests    map[string]*guest              // booted (or booting) guests: by VM instance UUID (vCenter), by hypervKey (Hyper-V)
	hv        *hypervHosts                   // simulated Hyper-V hosts (nil without --hyperv-hosts)
	journals  *journals                      // the Windows guests' logs, by the guests' key
	addresses int                            // addresses handed out so far
}

// workload is one workload cluster served by the in-memory API server.
type workload struct {
	cluster client.ObjectKey
	uid     types.UID // the Cluster's: one deleted and made again under its name is another
	name    string    // listener and resource group
	port    int32
}

// guest is the guest OS of one powered-on VM.
type guest struct {
	hypervisor   string // onVCenter or onHyperV
	vmName       string
	ch           channel
	cluster      client.ObjectKey
	node         string
	address      string
	controlPlane bool
	booted       bool      // the guest finished booting (joined, or failed for good)
	held         bool      // the guest waits for HoldGuestAnnotation to go (logged once)
	since        time.Time // first boot attempt
	// build is the Windows build of the VM's image (0: not a Windows image the simulator
	// knows); image says which image that is, and imageFlag how to tell the simulator its build.
	build            int
	image, imageFlag string
	// userData is what the guest read at boot, where it is read once (Hyper-V's config drive).
	userData []byte
	// journal is a Windows guest's disk and event logs (nil for Linux); cloudbaseInitRan once
	// cloudbase-init wrote its part.
	journal          *windowsJournal
	cloudbaseInitRan bool
}

// Hypervisors a guest runs on.
const (
	onVCenter = "vcenter"
	onHyperV  = "hyperv"
)

// channel is how a guest talks to its hypervisor, as its agent (VMware Tools, Hyper-V integration
// services) would: the address DHCP gave it, which the provider waits for, and bootstrap.ps1's
// status reports (Send-Status).
type channel interface {
	address(ctx context.Context, ip string) error
	report(ctx context.Context, st userdata.Status, r simguest.Report) error
}

func run(ctx context.Context, o options) error {
	mgmtScheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, infrav1.AddToScheme} {
		if err := add(mgmtScheme); err != nil {
			return err
		}
	}
	mgmt, err := client.New(ctrl.GetConfigOrDie(), client.Options{Scheme: mgmtScheme})
	if err != nil {
		return fmt.Errorf("management cluster client: %w", err)
	}
	s, err := newSim(ctx, o, mgmt)
	if err != nil {
		return err
	}
	defer s.close()

	var ready atomic.Bool
	go serveHealth(ctx, s.log, o.healthAddr, &ready, s.hv, s.journals)
	t := time.NewTicker(o.poll)
	defer t.Stop()
	for {
		if !ready.Load() {
			if err := s.vc.ensureTemplates(ctx, o); err != nil {
				s.log.Error(err, "prepare vcsim templates")
			} else {
				s.log.Info("vcsim templates ready", "templates", o.templates)
				ready.Store(true)
			}
		}
		if ready.Load() {
			if err := s.step(ctx); err != nil && ctx.Err() == nil {
				s.log.Error(err, "poll")
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// newSim starts the in-memory API server of the workload clusters.
func newSim(ctx context.Context, o options, mgmt client.Client) (*sim, error) {
	u, err := url.Parse(o.vcenter)
	if err != nil {
		return nil, err
	}
	memScheme, err := inmemory.Scheme()
	if err != nil {
		return nil, err
	}
	mem := inmemoryruntime.NewManager(memScheme)
	if err := mem.Start(ctx); err != nil {
		return nil, fmt.Errorf("in-memory API: %w", err)
	}
	// The mux signs each API server certificate for endpointHost, so clients that dial the
	// Service's ClusterIP verify it against the cluster CA as they would a real kube-apiserver.
	mux, err := inmemoryserver.NewWorkloadClustersMux(mem, o.endpointHost, inmemoryserver.CustomPorts{
		MinPort: inmemoryserver.DefaultMinPort, MaxPort: inmemoryserver.DefaultMaxPort, DebugPort: o.debugPort,
	})
	if err != nil {
		return nil, fmt.Errorf("in-memory API server: %w", err)
	}
	s := &sim{o: o, log: ctrl.Log.WithName("sim"), mgmt: mgmt, vc: &vcenter{u: u}, mem: mem, mux: mux,
		workloads: map[client.ObjectKey]*workload{}, refused: map[client.ObjectKey]string{}, guests: map[string]*guest{}, journals: &journals{}}
	if o.hypervHosts != "" {
		if s.hv, err = startHyperV(o, s.log.WithName("hyperv"), s.journals); err != nil {
			_ = mux.Shutdown(context.Background())
			return nil, fmt.Errorf("Hyper-V hosts: %w", err)
		}
	}
	return s, nil
}

// close stops serving the workload clusters and the Hyper-V hosts, and logs out of vcsim.
func (s *sim) close() {
	_ = s.mux.Shutdown(context.Background())
	s.hv.close()
	if s.vc.c != nil {
		_ = s.vc.c.Logout(context.Background())
	}
}

// serveHealth answers /healthz always, /readyz once vcsim has the templates, hypervVMsPath
// (the Hyper-V hosts' VMs as the hosts configured them, for the provider upgrade spec) and
// collectPath (log collectors vcsim runs in the guests): the suite
// waits for the Deployment to be available before it creates clusters.
func serveHealth(ctx context.Context, log logr.Logger, addr string, ready *atomic.Bool, hv *hypervHosts, guests *journals) {
	mux := http.NewServeMux()
	mux.HandleFunc(collectPath, guests.serveCollect)
	mux.HandleFunc(hypervVMsPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(hv.configs())
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "vcsim templates not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error(err, "health server")
	}
}

// step reads the management cluster, vcsim and the Hyper-V hosts once and moves every workload
// cluster and guest one step towards what they show.
func (s *sim) step(ctx context.Context) error {
	var clusters clusterv1.ClusterList
	if err := s.mgmt.List(ctx, &clusters); err != nil {
		return fmt.Errorf("list Clusters: %w", err)
	}
	s.syncWorkloads(ctx, clusters.Items)
	err := s.stepVCenter(ctx)
	if s.hv != nil {
		err = errors.Join(err, s.stepHyperV(ctx))
	}
	return err
}

// stepVCenter boots the guests of powered-on vcsim VMs and stops those of VMs powered off or gone.
func (s *sim) stepVCenter(ctx context.Context) error {
	vms, err := s.vc.vms(ctx)
	if err != nil {
		return err
	}
	var infraMachines infrav1.VCenterMachineList
	if err := s.mgmt.List(ctx, &infraMachines); err != nil {
		return fmt.Errorf("list VCenterMachines: %w", err)
	}
	seen := map[string]bool{}
	for i := range infraMachines.Items {
		im := &infraMachines.Items[i]
		uuid := string(im.UID)
		v, ok := vms[uuid]
		if !ok {
			continue
		}
		seen[uuid] = true
		g := s.guests[uuid]
		if !v.poweredOn {
			if g != nil {
				s.powerOff(ctx, uuid, g, false)
			}
			continue
		}
		if g != nil && g.booted {
			continue
		}
		if err := s.boot(ctx, im, v, g); err != nil && !errors.Is(err, errRetry) {
			s.log.Error(err, "guest boot", "vm", v.name, "machine", klog.KObj(im))
		}
	}
	for uuid, g := range s.guests {
		if g.hypervisor == onVCenter && !seen[uuid] {
			s.powerOff(ctx, uuid, g, true)
		}
	}
	return nil
}

// syncWorkloads serves the workload cluster of every Cluster whose control plane endpoint is
// ours and stops serving those of Clusters that are gone.
func (s *sim) syncWorkloads(ctx context.Context, clusters []clusterv1.Cluster) {
	live := map[client.ObjectKey]bool{}
	for i := range clusters {
		c := &clusters[i]
		ep := c.Spec.ControlPlaneEndpoint
		if ep.Host != s.o.endpointHost || ep.Port == 0 {
			continue
		}
		key := client.ObjectKeyFromObject(c)
		live[key] = true
		if w := s.workloads[key]; w != nil {
			if w.uid == c.UID {
				continue
			}
			// Deleted and made again under its name between two polls: a new workload cluster.
			if !s.dropWorkload(key, w) {
				continue
			}
		}
		if err := s.addWorkload(ctx, key, c.UID, ep.Port); err != nil {
			if s.refused[key] != err.Error() {
				s.log.Error(err, "serve workload cluster", "cluster", key)
			}
			s.refused[key] = err.Error()
			continue
		}
		delete(s.refused, key)
	}
	for key := range s.refused {
		if !live[key] {
			delete(s.refused, key)
		}
	}
	for key, w := range s.workloads {
		if !live[key] {
			s.dropWorkload(key, w)
		}
	}
}

// dropWorkload stops serving a workload cluster and forgets its guests; false when its listener
// could not be stopped (the next poll tries again).
func (s *sim) dropWorkload(key client.ObjectKey, w *workload) bool {
	if err := s.mux.DeleteWorkloadClusterListener(w.name); err != nil {
		s.log.Error(err, "stop serving workload cluster", "cluster", key)
		return false
	}
	s.mem.DeleteResourceGroup(w.name)
	delete(s.workloads, key)
	for uuid, g := range s.guests {
		if g.cluster == key {
			delete(s.guests, uuid)
		}
	}
	s.log.Info("workload cluster gone", "cluster", key, "uid", w.uid)
	return true
}

// addWorkload creates the workload cluster's store and reserves its listener; the listener
// starts serving when the first control plane guest brings up its API server.
func (s *sim) addWorkload(ctx context.Context, key client.ObjectKey, uid types.UID, port int32) error {
	for other, w := range s.workloads {
		if w.port == port {
			// The in-memory API server tells workload clusters apart by port only.
			return fmt.Errorf("port %d already serves Cluster %s; run one cluster at a time or give each its own port", port, other)
		}
	}
	name := key.String()
	s.mem.AddResourceGroup(name)
	if err := s.createNamespaces(ctx, s.mem.GetResourceGroup(name).GetClient()); err != nil {
		return err
	}
	if _, err := s.mux.InitWorkloadClusterListener(name, port); err != nil {
		return err
	}
	if err := s.mux.RegisterResourceGroup(name, name); err != nil {
		return err
	}
	s.workloads[key] = &workload{cluster: key, uid: uid, name: name, port: port}
	s.log.Info("serving workload cluster", "cluster", key, "endpoint", net.JoinHostPort(s.o.endpointHost, fmt.Sprint(port)))
	return nil
}

// boot starts (or continues starting) the guest of a powered-on VM.
func (s *sim) boot(ctx context.Context, im *infrav1.VCenterMachine, v vm, g *guest) error {
	if g == nil {
		data, hostname, err := v.userData()
		if err != nil {
			return err
		}
		if data == nil {
			return nil // not (yet) delivered: the guest's OS has nothing to run
		}
		clusterName := im.Labels[clusterv1.ClusterNameLabel]
		key := client.ObjectKey{Namespace: im.Namespace, Name: clusterName}
		if clusterName == "" || s.workloads[key] == nil {
			return fmt.Errorf("no workload cluster served for Cluster %s (control plane endpoint not %s?)", key, s.o.endpointHost)
		}
		g = &guest{hypervisor: onVCenter, vmName: v.name, ch: &vcenterChannel{vc: s.vc, ref: v.ref},
			cluster: key, node: guestos.NodeName(hostname), address: s.nextAddress(), since: time.Now(),
			build: s.o.build(v.guestID), image: fmt.Sprintf("the template's guest OS %q", v.guestID), imageFlag: "--windows-build"}
		// DHCP and VMware Tools: the address is what the provider waits for first.
		if err := g.ch.address(ctx, g.address); err != nil {
			return fmt.Errorf("report address: %w", err)
		}
		s.guests[string(im.UID)] = g
		if im.Spec.OS != infrav1.OSLinux {
			g.journal = s.journals.add(string(im.UID), v.ref.Value, hostname, g.build)
		}
		s.log.Info("guest powered on", "vm", v.name, "node", g.node, "address", g.address, "os", im.Spec.OS)
	}
	data, _, err := v.userData()
	if err != nil {
		return err
	}
	return s.runGuest(ctx, im, im.Spec.OS, g, data)
}

// HoldGuestAnnotation on a Machine holds its guest after the VM has powered on and reported its
// address, before cloudbase-init or cloud-init runs: the machine stays in the middle of its create
// (the provider waits for the guest's report) until the annotation is removed.
const HoldGuestAnnotation = "e2e.capwin.io/hold-guest"

// runGuest runs the guest's OS on its user data: cloud-init and kubeadm on Linux, cloudbase-init
// and bootstrap.ps1 on Windows. The guest is booted once that is done (or failed for good).
func (s *sim) runGuest(ctx context.Context, im client.Object, osType infrav1.OperatingSystem, g *guest, data []byte) error {
	w := s.workloads[g.cluster]
	if w == nil {
		return fmt.Errorf("workload cluster %s is gone", g.cluster)
	}
	machine, err := s.ownerMachine(ctx, im)
	if err != nil || machine == nil {
		return err
	}
	if _, held := machine.Annotations[HoldGuestAnnotation]; held {
		if !g.held {
			g.held = true
			s.log.Info("guest held: its OS waits until the Machine's annotation is gone", "node", g.node, "machine", klog.KObj(machine))
		}
		return errRetry
	}
	if osType == infrav1.OSLinux {
		g.controlPlane = isControlPlane(machine)
		err = s.bootLinux(ctx, w, machine, g, data)
	} else {
		_, broken := machine.Annotations[BrokenImageAnnotation]
		err = s.bootWindows(ctx, w, g, data, broken)
	}
	if err != nil {
		return err
	}
	g.booted = true
	return nil
}

// powerOff stops a guest: a control plane's static pods and etcd member go with it; a deleted
// VM's Node goes too (Cluster API deletes it as well, after the Machine's infrastructure is gone).
func (s *sim) powerOff(ctx context.Context, uuid string, g *guest, gone bool) {
	w := s.workloads[g.cluster]
	if w != nil {
		c := s.mem.GetResourceGroup(w.name).GetClient()
		if g.controlPlane {
			if err := s.stopControlPlane(ctx, w, c, g.node); err != nil {
				s.log.Error(err, "stop control plane guest", "node", g.node)
				return
			}
		}
		if err := s.nodeDown(ctx, c, g.node, gone); err != nil {
			s.log.Error(err, "node of powered-off guest", "node", g.node)
			return
		}
	}
	delete(s.guests, uuid)
	s.journals.remove(uuid)
	s.log.Info("guest powered off", "vm", g.vmName, "node", g.node, "vmDeleted", gone)
}

// ownerMachine is the Cluster API Machine that owns the infrastructure machine (nil until it is set).
func (s *sim) ownerMachine(ctx context.Context, im client.Object) (*clusterv1.Machine, error) {
	for _, ref := range im.GetOwnerReferences() {
		if ref.Kind != "Machine" {
			continue
		}
		m := &clusterv1.Machine{}
		if err := s.mgmt.Get(ctx, client.ObjectKey{Namespace: im.GetNamespace(), Name: ref.Name}, m); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return m, nil
	}
	return nil, nil
}

func isControlPlane(m *clusterv1.Machine) bool {
	_, ok := m.Labels[clusterv1.MachineControlPlaneLabel]
	return ok
}

// nextAddress is the next address of the guests' network, as DHCP would hand it out.
func (s *sim) nextAddress() string {
	n := s.addresses
	s.addresses++
	return fmt.Sprintf("%s.%d.%d", s.o.addressBase, n/250, n%250+1)
}
