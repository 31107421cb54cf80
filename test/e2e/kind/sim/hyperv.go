//go:build e2e

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	guestmeta "github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
	"github.com/capwin/capwin/internal/guestos"
	simguest "github.com/capwin/capwin/test/framework/harness/guest"
	"github.com/capwin/capwin/test/framework/hypervsim"
	"github.com/capwin/capwin/test/framework/hypervsim/wsman"
)

// hypervLinuxDisk is the --hyperv-disk value of a parent disk with a Linux image.
const hypervLinuxDisk = "linux"

// Sizes of the simulated hosts: room for every VM a spec creates (the flavors' defaults are
// 8 GiB per VM) and parent disks of image-builder's sizes (Linux 20 GiB, Windows 40 GiB), below
// the hyperv-windows flavor's default disks (CONTROL_PLANE_DISK_GIB 25, WINDOWS_DISK_GIB 80):
// the provider refuses a diskGiB smaller than its parent disk.
const (
	hypervHostMemoryMiB     = 256 << 10
	hypervLinuxParentSize   = 20 << 30
	hypervWindowsParentSize = 40 << 30
)

// hypervHosts are the simulated Hyper-V hosts: test/framework/hypervsim's model behind its WinRM server,
// the endpoint capwin's provider reaches with its real WinRM client (HTTPS, NTLM), one listener
// per host on the port its HyperVHost names.
type hypervHosts struct {
	hosts []*hypervHost
	// builds maps a parent disk (lower case) to the Windows build of its image (0: Linux).
	builds map[string]int
}

type hypervHost struct {
	name string
	*hypervsim.Host
	srv *wsman.Server
}

// startHyperV starts a listener per host of o.hypervHosts, all on the given certificate. A host
// whose caBundle does not verify that certificate for its address is served anyway (the provider
// then reports the TLS error, as it would against a real host) and logged, so a wrong e2e config
// shows in the simulator's log.
func startHyperV(o options, log logr.Logger, guests *journals) (*hypervHosts, error) {
	specs, err := parseHyperVHosts(o.hypervHosts)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(o.hypervCert, o.hypervKey)
	if err != nil {
		return nil, fmt.Errorf("WinRM certificate: %w", err)
	}
	if err := acceptScripts(o.hypervAcceptScripts, log); err != nil {
		return nil, err
	}
	hv := &hypervHosts{builds: map[string]int{}}
	disks := map[string]int64{}
	for path, b := range o.hypervDisks {
		build, _ := strconv.Atoi(b) // "linux": 0
		hv.builds[strings.ToLower(path)] = build
		disks[path] = hypervWindowsParentSize
		if build == 0 {
			disks[path] = hypervLinuxParentSize
		}
	}
	for _, spec := range specs {
		if err := verifyHostCertificate(spec, cert); err != nil {
			log.Error(err, "the provider will not trust this host's WinRM certificate", "host", spec.Name)
		}
		h := hypervsim.NewHost(spec.Name, hypervHostMemoryMiB, []string{o.hypervSwitch}, disks)
		// The image has capwin's scripts (by content hash) but no PowerShell parser.
		h.SkipSyntaxCheck()
		// PowerShell Direct runs capwin's log collector in a VM's guest to its end.
		name := spec.Name
		h.OnGuestLogs = func(_ *hypervsim.Host, id string, script []byte) ([]byte, error) {
			return guests.collect(hypervKey(name, id), script)
		}
		srv, err := h.ServeWith(wsman.Options{
			Users:       map[string]string{o.hypervUser: o.hypervPassword},
			Addr:        net.JoinHostPort("", strconv.Itoa(int(spec.Port))),
			Certificate: &cert,
		})
		if err != nil {
			hv.close()
			return nil, fmt.Errorf("host %s: %w", spec.Name, err)
		}
		hv.hosts = append(hv.hosts, &hypervHost{name: spec.Name, Host: h, srv: srv})
		log.Info("serving Hyper-V host", "host", spec.Name, "address", net.JoinHostPort(spec.Address, strconv.Itoa(int(spec.Port))))
	}
	return hv, nil
}

// parseHyperVHosts reads HyperVCluster.spec.hosts from a YAML flow list, as the hyperv-windows
// flavor pastes HYPERV_HOSTS into it, with the API's default port.
func parseHyperVHosts(list string) ([]infrav1.HyperVHost, error) {
	var hosts []infrav1.HyperVHost
	if err := yaml.UnmarshalStrict([]byte(list), &hosts); err != nil {
		return nil, fmt.Errorf("--hyperv-hosts: %w", err)
	}
	if len(hosts) == 0 {
		return nil, errors.New("--hyperv-hosts names no host")
	}
	ports := map[int32]string{}
	for i := range hosts {
		h := &hosts[i]
		if h.Port == 0 {
			h.Port = 5986
		}
		if h.Name == "" {
			return nil, fmt.Errorf("--hyperv-hosts: host %d has no name", i)
		}
		if other, ok := ports[h.Port]; ok {
			return nil, fmt.Errorf("--hyperv-hosts: hosts %s and %s share port %d; each host needs its own", other, h.Name, h.Port)
		}
		ports[h.Port] = h.Name
	}
	return hosts, nil
}

// verifyHostCertificate checks the certificate as capwin's WinRM client will: against the host's
// caBundle (else the system roots), for the host's address.
func verifyHostCertificate(h infrav1.HyperVHost, cert tls.Certificate) error {
	if h.InsecureSkipTLSVerify {
		return nil
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return err
	}
	opts := x509.VerifyOptions{DNSName: h.Address, Intermediates: x509.NewCertPool()}
	for _, der := range cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			opts.Intermediates.AddCert(c)
		}
	}
	if len(h.CABundle) > 0 {
		opts.Roots = x509.NewCertPool()
		if !opts.Roots.AppendCertsFromPEM(h.CABundle) {
			return errors.New("caBundle holds no PEM certificate")
		}
	}
	_, err = leaf.Verify(opts)
	return err
}

// acceptScripts lets the hosts run the scripts in dir (another release's, for the provider upgrade
// spec) besides this tree's. A missing folder is no error: the ConfigMap behind it is optional.
func acceptScripts(dir string, log logr.Logger) error {
	if dir == "" {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.ps1"))
	if err != nil {
		return err
	}
	scripts := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // the folder the flag names
		if err != nil {
			return err
		}
		scripts[strings.TrimSuffix(filepath.Base(f), ".ps1")] = string(b)
	}
	if len(scripts) > 0 {
		hypervsim.AcceptScripts(hypervsim.Release{Scripts: scripts, Input: v01Settings, Result: disksAsPaths})
		log.Info("the hosts also run another release's scripts", "folder", dir, "scripts", len(scripts))
	}
	return nil
}

// v01Settings gives a create the VM settings v0.1's create.ps1 hard-coded (Set-VM
// -AutomaticStopAction TurnOff -AutomaticCheckpointsEnabled $false): its input has none.
func v01Settings(op string, input json.RawMessage) (json.RawMessage, error) {
	if op != wire.OpCreate.Name {
		return input, nil
	}
	var in map[string]any
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	if _, ok := in["settings"]; !ok {
		in["settings"] = wire.VMSettings{AutomaticStopAction: "TurnOff", AutomaticStartDelay: -1}
	}
	return json.Marshal(in)
}

// disksAsPaths writes a VM's disks as v0.1's common.ps1 did, a list of paths (this tree's writes
// path, controller and location of each): the one change of the hosts' results since v0.1.0 that
// its managers cannot read. Every other change adds fields, which they ignore.
func disksAsPaths(result any) (any, error) {
	b, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if disks, ok := v["disks"].([]any); ok {
				paths := make([]any, 0, len(disks))
				for _, d := range disks {
					if m, ok := d.(map[string]any); ok {
						paths = append(paths, m["path"])
					} else {
						paths = append(paths, d)
					}
				}
				v["disks"] = paths
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return doc, nil
}

// hypervVMsPath serves hypervHosts.configs on the simulator's health port.
const hypervVMsPath = "/hyperv/vms"

// configs returns each host's VMs by ID as the host configured them: the guest side (heartbeat,
// KVP items, files, processes, the addresses the guest reports) left out, so a VM the provider did
// not touch compares equal over time.
func (hv *hypervHosts) configs() map[string]map[string]hypervsim.VM {
	out := map[string]map[string]hypervsim.VM{}
	if hv == nil {
		return out
	}
	for _, h := range hv.hosts {
		vms := map[string]hypervsim.VM{}
		for _, v := range h.VMs() {
			v.Heartbeat, v.KVP, v.GuestFiles, v.GuestPIDs, v.GuestNetwork = false, nil, nil, nil, hypervsim.GuestNetwork{}
			nics := make([]hypervsim.NIC, len(v.NICs))
			for i, n := range v.NICs {
				n.IPs = nil
				nics[i] = n
			}
			v.NICs = nics
			vms[v.ID] = v
		}
		out[h.name] = vms
	}
	return out
}

func (hv *hypervHosts) close() {
	if hv == nil {
		return
	}
	for _, h := range hv.hosts {
		h.srv.Close()
	}
}

// hypervKey is a Hyper-V guest's key in sim.guests.
func hypervKey(host, vmID string) string { return onHyperV + "/" + host + "/" + vmID }

// stepHyperV boots the guests of running VMs of HyperVMachines and stops those of VMs turned off
// or removed.
func (s *sim) stepHyperV(ctx context.Context) error {
	var infraMachines infrav1.HyperVMachineList
	if err := s.mgmt.List(ctx, &infraMachines); err != nil {
		return fmt.Errorf("list HyperVMachines: %w", err)
	}
	// A VM belongs to the HyperVMachine whose identity its notes carry (capwin-uid:<uid>): the
	// recorded instance UUID, else the object's UID.
	byUID := map[string]*infrav1.HyperVMachine{}
	for i := range infraMachines.Items {
		im := &infraMachines.Items[i]
		uid := im.Status.VM.InstanceUUID
		if uid == "" {
			uid = string(im.UID)
		}
		byUID[uid] = im
	}
	seen := map[string]bool{}
	for _, h := range s.hv.hosts {
		for _, v := range h.VMs() {
			im := byUID[noteValue(v.Notes, "capwin-uid:")]
			if im == nil {
				continue
			}
			key := hypervKey(h.name, v.ID)
			seen[key] = true
			g := s.guests[key]
			if v.State != "Running" {
				if g != nil {
					s.powerOff(ctx, key, g, false)
				}
				continue
			}
			if g != nil && g.booted {
				continue
			}
			if err := s.bootHyperV(ctx, im, h, v, g); err != nil && !errors.Is(err, errRetry) {
				s.log.Error(err, "guest boot", "host", h.name, "vm", v.Name, "machine", klog.KObj(im))
			}
		}
	}
	for key, g := range s.guests {
		if g.hypervisor == onHyperV && !seen[key] {
			s.powerOff(ctx, key, g, true)
		}
	}
	return nil
}

// bootHyperV starts (or continues starting) the guest of a running Hyper-V VM. The guest reads
// its config drive once, at boot, as cloud-init and cloudbase-init do: the provider ejects the
// drive once the Node has joined.
func (s *sim) bootHyperV(ctx context.Context, im *infrav1.HyperVMachine, h *hypervHost, v hypervsim.VM, g *guest) error {
	if g == nil {
		if len(v.DVDs) == 0 {
			// No config drive: delivery through PowerShell Direct (guestCredentialsRef), which
			// this simulator does not run.
			s.log.V(1).Info("VM without a config drive; nothing runs", "host", h.name, "vm", v.Name)
			return nil
		}
		files, err := readCidata(h.File(v.DVDs[0]))
		if err != nil {
			return fmt.Errorf("config drive %s: %w", v.DVDs[0], err)
		}
		if files["user-data"] == nil {
			return nil // nothing to run
		}
		var md guestmeta.Metadata
		if err := yaml.Unmarshal(files["meta-data"], &md); err != nil || md.LocalHostname == "" {
			return fmt.Errorf("config drive %s: meta-data without local-hostname (%v)", v.DVDs[0], err)
		}
		clusterName := im.Labels[clusterv1.ClusterNameLabel]
		key := client.ObjectKey{Namespace: im.Namespace, Name: clusterName}
		if clusterName == "" || s.workloads[key] == nil {
			return fmt.Errorf("no workload cluster served for Cluster %s (control plane endpoint not %s?)", key, s.o.endpointHost)
		}
		g = &guest{hypervisor: onHyperV, vmName: v.Name, ch: &hypervChannel{host: h.Host, id: v.ID},
			cluster: key, node: guestos.NodeName(md.LocalHostname), address: s.nextAddress(), since: time.Now(),
			build: s.hv.builds[strings.ToLower(v.Parent)], image: fmt.Sprintf("the parent disk %q", v.Parent), imageFlag: "--hyperv-disk",
			userData: files["user-data"]}
		// DHCP and the integration services: the address is what the provider waits for first.
		if err := g.ch.address(ctx, g.address); err != nil {
			return fmt.Errorf("report address: %w", err)
		}
		s.guests[hypervKey(h.name, v.ID)] = g
		if im.Spec.OS != infrav1.OSLinux {
			g.journal = s.journals.add(hypervKey(h.name, v.ID), "", md.LocalHostname, g.build)
		}
		s.log.Info("guest powered on", "host", h.name, "vm", v.Name, "node", g.node, "address", g.address, "os", im.Spec.OS)
	}
	return s.runGuest(ctx, im, im.Spec.OS, g, g.userData)
}

// noteValue returns the value of a "prefix..." line of a VM's notes.
func noteValue(notes, prefix string) string {
	for _, line := range strings.Split(notes, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			return v
		}
	}
	return ""
}

// hypervChannel is Hyper-V's integration services: the address through the network adapter's
// guest-reported IPs (with the heartbeat), the bootstrap status as a KVP guest item.
type hypervChannel struct {
	host *hypervsim.Host
	id   string
}

func (c *hypervChannel) address(_ context.Context, ip string) error {
	return c.host.GuestAddress(c.id, ip)
}

func (c *hypervChannel) report(_ context.Context, st userdata.Status, r simguest.Report) error {
	data := boundReport(r, st.MaxBytes)
	return c.host.GuestKVP(c.id, st.KVPValue, string(data))
}

// boundReport is Send-Status's bound on a report: a message of at most 256 characters, then
// shorter until the JSON fits maxBytes (a KVP item holds 1024 bytes).
func boundReport(r simguest.Report, maxBytes int) []byte {
	if utf8.RuneCountInString(r.Message) > 256 {
		r.Message = string([]rune(r.Message)[:256])
	}
	data, _ := json.Marshal(r)
	for maxBytes > 0 && len(data) > maxBytes && r.Message != "" {
		m := []rune(r.Message)
		r.Message = string(m[:max(len(m)-64, 0)])
		data, _ = json.Marshal(r)
	}
	return data
}
