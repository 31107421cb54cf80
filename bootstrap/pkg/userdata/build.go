package userdata

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Microsoft/hcsshim/osversion"

	"github.com/capwin/capwin/internal/guestos"
)

// Document modes.
const (
	ModeCloudbaseInit = "cloudbase-init"
	ModeStandalone    = "standalone"
)

// Well-known node paths. The sentinel is CAPI's Windows bootstrap success file.
const (
	StateDir     = `C:\var\lib\capwin`
	LogFile      = `C:\var\log\capwin\bootstrap.log`
	SentinelPath = `C:\run\cluster-api\bootstrap-success.complete`
	containerDir = `C:\Program Files\containerd`
)

// Status channels read by the infrastructure providers.
const (
	StatusGuestinfoKey = "guestinfo.capwin.bootstrap.status"
	StatusKVPKey       = `HKLM:\SOFTWARE\Microsoft\Virtual Machine\Guest`
	StatusKVPValue     = "capwin.bootstrap.status"
	StatusMaxBytes     = 1024
)

// MinimumBuild is the oldest Windows build capwin supports: Windows Server 2022.
const MinimumBuild = osversion.LTSC2022

// maxFileBytes bounds a decoded (gunzipped) file, so a small gzip cannot explode in memory.
const maxFileBytes = 16 << 20

// utf8BOM makes Windows PowerShell 5.1 read a user's command file as UTF-8, not the ANSI code page.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// buildDocument maps the Input to the data document. In cloudbase-init mode, what cloudbase-init
// does natively (plain files, users, time) goes to the cloud-config part instead.
func buildDocument(in *Input, mode string) (*Document, error) {
	join, err := joinConfig(in)
	if err != nil {
		return nil, fmt.Errorf("join configuration: %w", err)
	}
	containerd, err := renderContainerdConfig(in)
	if err != nil {
		return nil, fmt.Errorf("containerd configuration: %w", err)
	}
	hosts, err := registryHostFiles(in.Registries)
	if err != nil {
		return nil, fmt.Errorf("containerd registries: %w", err)
	}
	disks, err := docDisks(in.Disks)
	if err != nil {
		return nil, fmt.Errorf("data disks: %w", err)
	}
	dir := in.Binaries.Directory
	doc := &Document{
		Version:           1,
		Mode:              mode,
		MinimumBuild:      MinimumBuild,
		NodeName:          in.NodeName,
		KubernetesVersion: in.KubernetesVersion,
		Paths: Paths{
			StateDir: StateDir,
			LogFile:  LogFile,
			Sentinel: SentinelPath,
			Directories: []string{
				dir, `C:\var\log\kubelet`, `C:\var\log\containerd`, `C:\var\lib\kubelet\etc\kubernetes\pki`, `C:\etc\kubernetes\pki`,
				`C:\etc\kubernetes\manifests`, `C:\opt\cni\bin`, `C:\etc\cni\net.d`, `C:\run\cluster-api`,
			},
			// The join configuration (token), kubelet's kubeconfigs and client keys.
			Private: []string{StateDir, `C:\etc\kubernetes`, `C:\var\lib\kubelet\pki`},
		},
		Status: Status{GuestinfoKey: StatusGuestinfoKey, KVPKey: StatusKVPKey, KVPValue: StatusKVPValue, MaxBytes: StatusMaxBytes},
		NetworkSource: NetworkSource{GuestinfoKey: guestos.NetworkGuestinfoKey, VolumeLabel: guestos.ConfigDriveLabel,
			File: guestos.NetworkFile},
		Features: []string{"Containers"},
		Proxy:    proxy(in.Proxy),
		Disks:    disks,
		Containerd: DocContainerd{
			Directory:   containerDir,
			ConfigPath:  containerDir + `\config.toml`,
			Config:      containerd,
			Register:    in.Binaries.Containerd != nil,
			LogFile:     ContainerdLogFile,
			LogRotation: logRotation(in),
			Hosts:       hosts,
		},
		Firewall: firewall(in.CNI),
		Kubelet:  DocKubelet{Binary: dir + `\kubelet.exe`, Args: kubeletArgs(in), LogRunner: kubeLogRunner(in)},
		Join: DocJoin{
			Kubeadm:    dir + `\kubeadm.exe`,
			ConfigPath: StateDir + `\kubeadm-join-config.yaml`,
			Config:     join,
			Kubeconfig: `C:\etc\kubernetes\kubelet.conf`,
		},
	}
	if in.HyperVIsolation {
		doc.Features = append(doc.Features, "Hyper-V")
	}
	if in.DefenderExclusions {
		doc.Defender = defender(in)
	}
	if doc.PrePull, err = docPrePull(in.PrePull, in.Registries); err != nil {
		return nil, fmt.Errorf("prePull: %w", err)
	}
	doc.Downloads = downloads(in.Binaries)
	if doc.PreJoin, err = commandFiles("prejoin", in.PreJoinCommands); err != nil {
		return nil, err
	}
	if doc.PostJoin, err = commandFiles("postjoin", in.PostJoinCommands); err != nil {
		return nil, err
	}
	for _, f := range in.Files {
		if mode == ModeCloudbaseInit && !f.Append {
			continue // written by cloudbase-init's write_files
		}
		content, err := decodeFile(f)
		if err != nil {
			return nil, err
		}
		doc.Files = append(doc.Files, DocFile{Path: f.Path, Content: base64.StdEncoding.EncodeToString(content), Append: f.Append})
	}
	if mode == ModeStandalone {
		doc.Users = in.Users // cloudbase-init's users plugin creates them otherwise
	}
	// The script does what cloudbase-init's cloud-config does differently from the API's
	// documentation, in both formats: its set_timezone takes only IANA names (the API takes
	// Windows ids), and its users plugin writes every key to <home>\.ssh\authorized_keys, which
	// OpenSSH ignores for administrators.
	doc.AdminKeys = adminKeys(in.Users)
	if d := in.Domain; d != nil {
		doc.Domain = &DocDomain{Name: d.Name, OrganizationalUnit: d.OrganizationalUnit, DNSServers: d.DNSServers, Username: d.Username, Password: d.Password,
			ReuseAccount: d.ReuseAccount, Groups: d.Groups}
		if !d.AccountNotBefore.IsZero() {
			doc.Domain.AccountNotBefore = d.AccountNotBefore.UTC().Truncate(time.Second).Format(time.RFC3339)
		}
		if len(d.Groups) > 0 {
			doc.Domain.GroupWaitSeconds = GroupWait
		}
	}
	if in.Timezone != "" || len(in.NTPServers) > 0 {
		doc.Time = &DocTime{Timezone: in.Timezone, NTPServers: in.NTPServers}
	}
	return doc, nil
}

func proxy(p Proxy) *DocProxy {
	if p.HTTPProxy == "" && p.HTTPSProxy == "" && len(p.NoProxy) == 0 {
		return nil
	}
	return &DocProxy{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: strings.Join(p.NoProxy, ",")}
}

// firewall opens the kubelet port and, for a VXLAN overlay, its UDP port.
func firewall(c CNI) []FirewallRule {
	rules := []FirewallRule{{Name: "capwin-kubelet", Protocol: "TCP", Port: 10250}}
	if c.Plugin == "calico" || c.Plugin == "flannel" {
		rules = append(rules, FirewallRule{Name: "capwin-vxlan", Protocol: "UDP", Port: c.VXLANPort})
	}
	return rules
}

func defender(in *Input) *Defender {
	paths := []string{
		containerDir, `C:\ProgramData\containerd`, in.Binaries.Directory, `C:\var\lib\kubelet`,
		`C:\opt\cni`, `C:\etc\cni`,
	}
	for _, dir := range []string{in.ContainerdRoot, in.ContainerdState} {
		if dir != "" {
			paths = append(paths, dir) // containerd's directories on a data disk
		}
	}
	return &Defender{
		Paths: paths,
		Processes: []string{
			"containerd.exe", "containerd-shim-runhcs-v1.exe", "kubelet.exe", "kube-proxy.exe",
			"calico-node.exe", "flanneld.exe",
		},
	}
}

func downloads(b Binaries) []DocDownload {
	var out []DocDownload
	add := func(d *Download, target, extract, service string) {
		if d != nil {
			out = append(out, DocDownload{URL: d.URL, SHA256: strings.ToLower(d.SHA256), Path: target, Extract: extract, Service: service})
		}
	}
	add(b.Kubelet, b.Directory+`\kubelet.exe`, "", "kubelet")
	add(b.Kubeadm, b.Directory+`\kubeadm.exe`, "", "")
	add(b.KubeLogRunner, b.Directory+`\`+KubeLogRunner, "", "kubelet") // the kubelet service's program
	add(b.Containerd, StateDir+`\containerd.tar.gz`, containerDir, "containerd")
	return out
}

// commandFiles keeps each user command in its own file: user code is never mixed with our data.
func commandFiles(prefix string, commands []string) ([]DocFile, error) {
	out := make([]DocFile, 0, len(commands))
	for i, c := range commands {
		if strings.TrimSpace(c) == "" {
			return nil, fmt.Errorf("%s command %d is empty", prefix, i)
		}
		content := append(append([]byte{}, utf8BOM...), c...)
		out = append(out, DocFile{
			Path:    fmt.Sprintf(`%s\%s-%02d.ps1`, StateDir, prefix, i),
			Content: base64.StdEncoding.EncodeToString(content),
		})
	}
	return out, nil
}

// adminKeys are the SSH keys of members of Administrators: Windows OpenSSH reads them only from
// C:\ProgramData\ssh\administrators_authorized_keys.
func adminKeys(users []User) []string {
	var keys []string
	for _, u := range users {
		for _, g := range u.Groups {
			if strings.EqualFold(g, "Administrators") {
				keys = append(keys, u.SSHAuthorizedKeys...)
				break
			}
		}
	}
	return keys
}

// decodeFile returns the exact bytes a file must have on the node.
func decodeFile(f File) ([]byte, error) {
	data := []byte(f.Content)
	enc := f.Encoding
	if strings.HasSuffix(enc, "base64") {
		var err error
		if data, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(f.Content), "")); err != nil {
			return nil, fmt.Errorf("file %s: content is not valid base64: %w", f.Path, err)
		}
		enc = strings.TrimSuffix(strings.TrimSuffix(enc, "base64"), "+")
	}
	switch enc {
	case "":
		return data, nil
	case "gzip":
		return gunzip(data, f.Path)
	default:
		return nil, fmt.Errorf("file %s: unknown encoding %q", f.Path, f.Encoding)
	}
}

func gunzip(data []byte, name string) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("file %s: content is not gzip: %w", name, err)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("file %s: gzip content is corrupt: %w", name, err)
	}
	if len(out) > maxFileBytes {
		return nil, errors.New("file " + name + ": content is larger than 16 MiB once decompressed")
	}
	return out, nil
}
