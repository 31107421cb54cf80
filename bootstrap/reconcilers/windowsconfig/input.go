package windowsconfig

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/bootstrap/webhooks"
)

// defaultTaints is what a Windows worker gets when spec.nodeRegistration.taints is unset, so that
// Linux workloads without a toleration never land on it.
var defaultTaints = []userdata.Taint{{Key: "os", Value: "windows", Effect: "NoSchedule"}}

// JoinParams are the values that come from the cluster rather than from the WindowsConfig.
type JoinParams struct {
	Endpoint          string
	Token             string
	CAHash            string
	KubernetesVersion string
	// Files are the resolved contents of spec.files, index-aligned with spec.files.
	Files []string
	// Registries are the resolved references of spec.containerd.registries.
	Registries RegistryRefs
	// DomainCredentials are the resolved spec.activeDirectory.credentials.
	DomainCredentials userdata.Access
	// MachineCreated is the Machine's creation time: a computer account older than it is not
	// this Machine's (its join refuses it unless reuse is Allow).
	MachineCreated time.Time
}

// defaultPrePullSeconds bounds the pre-pulls when prePull.timeoutSeconds is unset.
const defaultPrePullSeconds = 1800

// BuildInput maps a WindowsConfig spec and the cluster's join parameters to the renderer's model.
// It is pure: no I/O, so every mapping rule is unit-tested.
func BuildInput(spec *bootstrapv1.WindowsConfigSpec, p JoinParams) userdata.Input {
	// Objects stored before a default existed (or built in Go) get the admission defaults here.
	spec = spec.DeepCopy()
	webhooks.DefaultSpec(spec)
	in := userdata.Input{
		Format:            userdata.Format(spec.Format),
		NodeName:          spec.NodeRegistration.Name,
		KubernetesVersion: p.KubernetesVersion,
		Join: userdata.Join{
			APIServerEndpoint:     p.Endpoint,
			Token:                 p.Token,
			CACertHashes:          []string{p.CAHash},
			CRISocket:             spec.NodeRegistration.CRISocket,
			IgnorePreflightErrors: spec.NodeRegistration.IgnorePreflightErrors,
		},
		Labels:                  nodeLabels(spec.NodeRegistration.Labels, p.KubernetesVersion),
		Taints:                  taints(spec.NodeRegistration.Taints),
		PauseImage:              spec.Containerd.PauseImage,
		Registries:              registries(spec.Containerd.Registries, p.Registries),
		ContainerdRoot:          spec.Containerd.Root,
		ContainerdState:         spec.Containerd.State,
		ContainerdConfigVersion: containerdConfigVersion(spec.Containerd.Version, spec.Binaries),
		Disks:                   disks(spec.Disks),
		HyperVIsolation:         spec.HyperVIsolation,
		CNI:                     cni(spec.CNI),
		Binaries:                binaries(spec.Binaries),
		Proxy:                   userdata.Proxy{HTTPProxy: spec.Proxy.HTTPProxy, HTTPSProxy: spec.Proxy.HTTPSProxy, NoProxy: spec.Proxy.NoProxy},
		NTPServers:              spec.NTP.Servers,
		Timezone:                spec.Timezone,
		PreJoinCommands:         spec.PreJoinCommands,
		PostJoinCommands:        spec.PostJoinCommands,
		DefenderExclusions:      *spec.DefenderExclusions,
	}
	if pp := spec.PrePull; pp != nil && len(pp.Images) > 0 {
		in.PrePull = &userdata.PrePull{Images: pp.Images, TimeoutSeconds: int(pp.TimeoutSeconds)}
		if in.PrePull.TimeoutSeconds == 0 {
			in.PrePull.TimeoutSeconds = defaultPrePullSeconds
		}
	}
	if ad := spec.ActiveDirectory; ad != nil {
		in.Domain = &userdata.Domain{Name: ad.Domain, OrganizationalUnit: ad.OrganizationalUnit, DNSServers: ad.DNSServers,
			Username: p.DomainCredentials.Username, Password: p.DomainCredentials.Password,
			ReuseAccount: reuseAllowed(ad), AccountNotBefore: p.MachineCreated}
		if ad.Directory != nil {
			in.Domain.Groups = ad.Groups // the manager adds them only through its directory access
		}
	}
	if spec.KubeletConfiguration != nil {
		in.KubeletConfiguration = spec.KubeletConfiguration.Raw
	}
	for _, a := range spec.NodeRegistration.KubeletExtraArgs {
		in.KubeletExtraArgs = append(in.KubeletExtraArgs, userdata.Arg{Name: a.Name, Value: a.Value})
	}
	for _, u := range spec.Users {
		in.Users = append(in.Users, userdata.User{Name: u.Name, Groups: u.Groups, SSHAuthorizedKeys: u.SSHAuthorizedKeys})
	}
	for i, f := range spec.Files {
		content := ptr.Deref(f.Content, "")
		if i < len(p.Files) && f.ContentFrom != nil {
			content = p.Files[i]
		}
		in.Files = append(in.Files, userdata.File{Path: f.Path, Encoding: string(f.Encoding), Content: content, Append: f.Append})
	}
	return in
}

// KubernetesVersionLabel is the node label with the Machine's Kubernetes version: the kube-proxy
// DaemonSet of each version selects its nodes by it (templates/addons/kube-proxy-windows), so a
// node runs the kube-proxy of its own kubelet's version through a blue/green upgrade.
const KubernetesVersionLabel = "capwin.io/kubernetes-version"

// nodeLabels adds KubernetesVersionLabel to the spec's labels. A version that is no valid label
// value (build metadata after '+') gets the '+' as '_', which the label allows.
func nodeLabels(labels map[string]string, version string) map[string]string {
	if version == "" {
		return labels
	}
	out := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		out[k] = v
	}
	out[KubernetesVersionLabel] = strings.ReplaceAll(version, "+", "_")
	return out
}

// taints: nil means "the default Windows taint"; an explicit empty list means "no taints".
func taints(t *[]bootstrapv1.Taint) []userdata.Taint {
	if t == nil {
		return defaultTaints
	}
	out := make([]userdata.Taint, 0, len(*t))
	for _, x := range *t {
		out = append(out, userdata.Taint{Key: x.Key, Value: x.Value, Effect: x.Effect})
	}
	return out
}

// containerdArchive is the file name of a containerd release archive: containerd-2.1.4-windows-amd64.tar.gz.
var containerdArchive = regexp.MustCompile(`containerd-(\d+\.\d+)\.\d+[^/]*$`)

// containerdConfigVersion is the config.toml version the node's containerd reads as it is, from
// spec.containerd.version or the archive binaries.containerd downloads: 4 from 2.3, 3 for 2.1 and
// 2.2, else 2 (1.7, 2.0 without bin_dirs, and an unknown release, which converts it).
func containerdConfigVersion(release bootstrapv1.ContainerdVersion, b bootstrapv1.Binaries) int {
	if release == "" && b.Source == bootstrapv1.BinariesDownload && b.Containerd != nil {
		if m := containerdArchive.FindStringSubmatch(b.Containerd.URL); m != nil {
			release = bootstrapv1.ContainerdVersion(m[1])
		}
	}
	majorText, minorText, _ := strings.Cut(string(release), ".")
	major, err1 := strconv.Atoi(majorText)
	minor, err2 := strconv.Atoi(minorText)
	switch {
	case err1 != nil || err2 != nil:
		return 2
	case major > 2 || major == 2 && minor >= 3:
		return 4
	case major == 2 && minor >= 1:
		return 3
	}
	return 2
}

func cni(c bootstrapv1.CNI) userdata.CNI {
	return userdata.CNI{Plugin: string(c.Plugin), VXLANVNI: c.VXLANVNI, VXLANPort: c.VXLANPort}
}

func binaries(b bootstrapv1.Binaries) userdata.Binaries {
	out := userdata.Binaries{Directory: b.Directory}
	if b.Source != bootstrapv1.BinariesDownload {
		return out
	}
	out.Kubelet, out.Kubeadm, out.Containerd = download(b.Kubelet), download(b.Kubeadm), download(b.Containerd)
	out.KubeLogRunner = download(b.KubeLogRunner)
	return out
}

func download(d *bootstrapv1.Download) *userdata.Download {
	if d == nil {
		return nil
	}
	return &userdata.Download{URL: d.URL, SHA256: d.SHA256}
}

func disks(in []bootstrapv1.Disk) []userdata.Disk {
	var out []userdata.Disk
	for _, d := range in {
		out = append(out, userdata.Disk{
			Target: d.Location.Target, LUN: d.Location.LUN, PartitionStyle: string(d.PartitionStyle),
			FileSystem: string(d.FileSystem), Label: d.Label, AllocationUnitSize: d.AllocationUnitSize,
			DriveLetter: d.DriveLetter, MountPath: d.MountPath,
		})
	}
	return out
}
