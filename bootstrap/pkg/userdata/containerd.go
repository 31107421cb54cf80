package userdata

import (
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Runtime handlers: process isolation is the default; Hyper-V isolation runs images of an older
// Windows build in a utility VM (RuntimeClass windows-hyperv).
const (
	RuntimeProcess    = "runhcs-wcow-process"
	RuntimeHypervisor = "runhcs-wcow-hypervisor"
)

// containerdConfig is containerd's config.toml in version 2 (read by containerd 1.7, and by 2.x,
// which converts it at every start), built from typed structs; containerdConfigV3 is version 3.
type containerdConfig struct {
	Version int               `toml:"version"`
	Root    string            `toml:"root"`
	State   string            `toml:"state"`
	GRPC    containerdGRPC    `toml:"grpc"`
	Plugins containerdPlugins `toml:"plugins"`
}

type containerdGRPC struct {
	Address string `toml:"address"`
}

type containerdPlugins struct {
	CRI criPlugin `toml:"io.containerd.grpc.v1.cri"`
}

type criPlugin struct {
	SandboxImage string       `toml:"sandbox_image"`
	Containerd   criContainer `toml:"containerd"`
	CNI          criCNI       `toml:"cni"`
	Registry     criRegistry  `toml:"registry"`
}

// criRegistry points containerd at the hosts.toml folders; configs holds static credentials.
type criRegistry struct {
	ConfigPath string                       `toml:"config_path"`
	Configs    map[string]criRegistryConfig `toml:"configs,omitempty"`
}

type criRegistryConfig struct {
	Auth criAuth `toml:"auth"`
}

type criAuth struct {
	Username string `toml:"username"`
	Password string `toml:"password"`
}

type criContainer struct {
	Snapshotter        string                `toml:"snapshotter"`
	DefaultRuntimeName string                `toml:"default_runtime_name"`
	Runtimes           map[string]criRuntime `toml:"runtimes"`
}

type criRuntime struct {
	RuntimeType string         `toml:"runtime_type"`
	Options     *runhcsOptions `toml:"options,omitempty"`
}

// runhcsOptions.SandboxIsolation 1 is Hyper-V isolation (runhcs options proto).
type runhcsOptions struct {
	SandboxIsolation int `toml:"SandboxIsolation"`
}

type criCNI struct {
	BinDir  string `toml:"bin_dir"`
	ConfDir string `toml:"conf_dir"`
}

// CNI directories on the node (forward slashes, as the Windows CNI plugins expect).
const (
	cniBinDir  = "C:/opt/cni/bin"
	cniConfDir = "C:/etc/cni/net.d"
)

// containerd's directories when the config names none.
const (
	DefaultContainerdRoot  = `C:\ProgramData\containerd\root`
	DefaultContainerdState = `C:\ProgramData\containerd\state`
)

func orDefault(value, fallback string) string {
	if value == "" {
		return fallback
	}
	return value
}

// pipePath turns npipe:////./pipe/NAME into \\.\pipe\NAME.
func pipePath(criSocket string) (string, error) {
	name, ok := strings.CutPrefix(criSocket, "npipe:////./pipe/")
	if !ok || name == "" || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("criSocket %q: want npipe:////./pipe/<name>", criSocket)
	}
	return `\\.\pipe\` + name, nil
}

func renderContainerdConfig(in *Input) (string, error) {
	pipe, err := pipePath(in.Join.CRISocket)
	if err != nil {
		return "", err
	}
	auth, err := registryAuth(in.Registries)
	if err != nil {
		return "", err
	}
	runtimes := map[string]criRuntime{RuntimeProcess: {RuntimeType: "io.containerd.runhcs.v1"}}
	if in.HyperVIsolation {
		runtimes[RuntimeHypervisor] = criRuntime{RuntimeType: "io.containerd.runhcs.v1", Options: &runhcsOptions{SandboxIsolation: 1}}
	}
	cfg := containerdConfig{
		Version: 2,
		Root:    orDefault(in.ContainerdRoot, DefaultContainerdRoot),
		State:   orDefault(in.ContainerdState, DefaultContainerdState),
		GRPC:    containerdGRPC{Address: pipe},
		Plugins: containerdPlugins{CRI: criPlugin{
			SandboxImage: in.PauseImage,
			Containerd: criContainer{
				Snapshotter:        "windows",
				DefaultRuntimeName: RuntimeProcess,
				Runtimes:           runtimes,
			},
			CNI:      criCNI{BinDir: cniBinDir, ConfDir: cniConfDir},
			Registry: criRegistry{ConfigPath: CertsDir, Configs: auth},
		}},
	}
	var out []byte
	if in.ContainerdConfigVersion >= 3 {
		out, err = toml.Marshal(cfg.newer(in.ContainerdConfigVersion))
	} else {
		out, err = toml.Marshal(cfg)
	}
	if err != nil {
		return "", fmt.Errorf("marshal containerd config: %w", err)
	}
	return string(out), nil
}
