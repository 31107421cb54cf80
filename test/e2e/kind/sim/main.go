//go:build e2e

// Command sim gives the kind e2e suite what vcsim cannot: VMs that boot. It runs in the
// management cluster next to vcsim and
//
//   - prepares vcsim: clones the model's first VM into the Linux and Windows templates the
//     cluster templates name (each with its guest OS identifier);
//   - serves every workload cluster's API at the control plane endpoint the e2e config gives
//     (CONTROL_PLANE_ENDPOINT_IP, the ClusterIP of this pod's Service), with Cluster API's
//     in-memory API server and etcd (sigs.k8s.io/cluster-api/test/infrastructure/inmemory), as
//     Cluster API's own in-memory provider does;
//   - boots the guest of every VM that powers on with user data in its guestinfo: a Linux
//     control plane machine becomes a Node with the static pods and etcd member
//     KubeadmControlPlane checks; a Windows machine unpacks capwin's user data as cloudbase-init
//     would, checks the join against the workload cluster (endpoint, bootstrap token, CA pin),
//     reports its progress through guestinfo as bootstrap.ps1 does and registers its Node;
//   - serves simulated Hyper-V hosts at the WinRM boundary (test/framework/hypervsim, WinRM over HTTPS with
//     NTLM, one port per host, as the HyperVCluster's hosts name them), and boots the guest of
//     every VM one of them starts with a cidata config drive: the same guests as on vSphere, the
//     user data read from the drive's Joliet names, the address and bootstrap reports going
//     through Hyper-V's integration services (NIC addresses, a KVP item).
//
// It changes nothing in the management cluster: the providers under test do all of that.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// options are the simulator's flags; the suite fills them from the e2e config's variables.
type options struct {
	vcenter      string
	datacenter   string
	sourceVM     string
	resourcePool string
	templates    pairs // template name -> guest OS identifier
	builds       pairs // guest OS identifier -> Windows build
	endpointHost string
	addressBase  string
	poll         time.Duration
	joinTimeout  time.Duration
	healthAddr   string
	debugPort    int32
	// hypervAcceptScripts: see the flag.
	hypervAcceptScripts string

	// Hyper-V hosts (none without hypervHosts): HyperVCluster.spec.hosts as a YAML flow list
	// (the e2e config's HYPERV_HOSTS), the account they accept, the listeners' certificate, the
	// virtual switch and the parent disks every host has.
	hypervHosts                string
	hypervUser, hypervPassword string
	hypervCert, hypervKey      string
	hypervSwitch               string
	hypervDisks                pairs // parent disk path -> Windows build, or "linux"
}

// pairs is a repeatable name=value flag.
type pairs map[string]string

func (p pairs) String() string { return fmt.Sprint(map[string]string(p)) }

func (p pairs) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" || val == "" {
		return fmt.Errorf("want name=value, got %q", v)
	}
	p[k] = val
	return nil
}

func main() {
	o := newOptions(flag.CommandLine)
	klog.InitFlags(nil)
	flag.Parse()
	ctrl.SetLogger(klog.Background())

	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "sim:", err)
		os.Exit(2)
	}
	if err := run(ctrl.SetupSignalHandler(), *o); err != nil {
		fmt.Fprintln(os.Stderr, "sim:", err)
		os.Exit(1)
	}
}

// newOptions registers the simulator's flags on fs; the options take their values when fs is
// parsed.
func newOptions(fs *flag.FlagSet) *options {
	o := &options{templates: pairs{}, builds: pairs{}, hypervDisks: pairs{}, debugPort: 19000}
	fs.StringVar(&o.vcenter, "vcenter", "", "vCenter SDK URL with credentials (https://user:pass@host/sdk)")
	fs.StringVar(&o.datacenter, "datacenter", "DC0", "datacenter of the templates")
	fs.StringVar(&o.sourceVM, "source-vm", "DC0_C0_RP0_VM0", "VM of the vcsim model the templates are cloned from")
	fs.StringVar(&o.resourcePool, "resource-pool", "/DC0/host/DC0_C0/Resources", "resource pool of the templates")
	fs.Var(o.templates, "template", "a template to create, name=guestId (repeatable)")
	fs.Var(o.builds, "windows-build", "the Windows build of a guest OS identifier, guestId=build (repeatable)")
	fs.StringVar(&o.endpointHost, "endpoint-host", "", "the control plane endpoint host the workload clusters are served at (the Service's ClusterIP)")
	fs.StringVar(&o.addressBase, "address-base", "10.1", "first two octets of the addresses guests get, as DHCP would give them")
	fs.DurationVar(&o.poll, "poll", time.Second, "how often vcsim and the management cluster are read")
	fs.DurationVar(&o.joinTimeout, "join-timeout", 2*time.Minute, "how long a Windows guest retries discovery before its join fails")
	fs.StringVar(&o.healthAddr, "health-addr", ":8081", "address of /healthz and /readyz (ready once the templates exist)")
	fs.Func("debug-port", "port of the in-memory API server's debug endpoint (0: any free port; default 19000)", func(v string) error {
		p, err := strconv.ParseUint(v, 10, 16)
		o.debugPort = int32(p)
		return err
	})
	fs.StringVar(&o.hypervHosts, "hyperv-hosts", "", "Hyper-V hosts to simulate, as HyperVCluster.spec.hosts in a YAML flow list; each listens on its port")
	fs.StringVar(&o.hypervUser, "hyperv-username", "", "the WinRM account the Hyper-V hosts accept (NTLM and Basic)")
	fs.StringVar(&o.hypervPassword, "hyperv-password", "", "the password of --hyperv-username")
	fs.StringVar(&o.hypervCert, "hyperv-tls-cert", "", "PEM file of the Hyper-V hosts' WinRM certificate (and its chain)")
	fs.StringVar(&o.hypervKey, "hyperv-tls-key", "", "PEM file of that certificate's key")
	fs.StringVar(&o.hypervSwitch, "hyperv-switch", "", "the virtual switch every Hyper-V host has")
	fs.Var(o.hypervDisks, "hyperv-disk", "a parent disk every Hyper-V host has, path=build (Windows) or path=linux (repeatable)")
	fs.StringVar(&o.hypervAcceptScripts, "hyperv-accept-scripts", "", "a folder of another capwin release's Hyper-V scripts (runner.ps1, common.ps1, host.ps1, ...) the hosts run too; a missing or empty folder adds none")
	return o
}

func (o options) validate() error {
	if _, err := url.Parse(o.vcenter); err != nil || o.vcenter == "" {
		return fmt.Errorf("--vcenter: %q is not a URL", o.vcenter)
	}
	if o.endpointHost == "" {
		return fmt.Errorf("--endpoint-host is required")
	}
	if len(o.templates) == 0 {
		return fmt.Errorf("at least one --template is required")
	}
	for id, b := range o.builds {
		if _, err := strconv.ParseUint(b, 10, 16); err != nil {
			return fmt.Errorf("--windows-build %s=%s: %w", id, b, err)
		}
	}
	if o.hypervHosts == "" {
		return nil
	}
	for name, v := range map[string]string{"--hyperv-username": o.hypervUser, "--hyperv-password": o.hypervPassword,
		"--hyperv-tls-cert": o.hypervCert, "--hyperv-tls-key": o.hypervKey, "--hyperv-switch": o.hypervSwitch} {
		if v == "" {
			return fmt.Errorf("%s is required with --hyperv-hosts", name)
		}
	}
	if len(o.hypervDisks) == 0 {
		return fmt.Errorf("at least one --hyperv-disk is required with --hyperv-hosts")
	}
	for path, b := range o.hypervDisks {
		if _, err := strconv.ParseUint(b, 10, 16); err != nil && b != hypervLinuxDisk {
			return fmt.Errorf("--hyperv-disk %s=%s: want a Windows build or %s", path, b, hypervLinuxDisk)
		}
	}
	return nil
}

// build is the Windows build of a guest OS identifier (0 if unknown).
func (o options) build(guestID string) int {
	b, _ := strconv.Atoi(o.builds[guestID])
	return b
}
