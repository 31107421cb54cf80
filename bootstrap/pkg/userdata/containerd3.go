package userdata

// containerd 2.1 and later read config version 3 as it is (a version 2 file is converted at every
// start, with a log line): the CRI plugin is split in an image plugin and a runtime plugin, the
// sandbox image is a pinned image, and the CNI binaries are a list of folders.
type containerdConfigV3 struct {
	Version int            `toml:"version"`
	Root    string         `toml:"root"`
	State   string         `toml:"state"`
	GRPC    containerdGRPC `toml:"grpc"`
	Plugins v3Plugins      `toml:"plugins"`
}

type v3Plugins struct {
	Images  v3Images  `toml:"io.containerd.cri.v1.images"`
	Runtime v3Runtime `toml:"io.containerd.cri.v1.runtime"`
}

type v3Images struct {
	Snapshotter  string            `toml:"snapshotter"`
	PinnedImages map[string]string `toml:"pinned_images"`
	Registry     criRegistry       `toml:"registry"`
}

type v3Runtime struct {
	Containerd v3Containerd `toml:"containerd"`
	CNI        v3CNI        `toml:"cni"`
}

type v3Containerd struct {
	DefaultRuntimeName string                `toml:"default_runtime_name"`
	Runtimes           map[string]criRuntime `toml:"runtimes"`
}

type v3CNI struct {
	BinDirs []string `toml:"bin_dirs"`
	ConfDir string   `toml:"conf_dir"`
}

// v3 is the same configuration as cfg (version 2) in version 3.
func (cfg containerdConfig) v3() containerdConfigV3 {
	cri := cfg.Plugins.CRI
	return containerdConfigV3{
		Version: 3,
		Root:    cfg.Root,
		State:   cfg.State,
		GRPC:    cfg.GRPC,
		Plugins: v3Plugins{
			Images: v3Images{
				Snapshotter:  cri.Containerd.Snapshotter,
				PinnedImages: map[string]string{"sandbox": cri.SandboxImage},
				Registry:     cri.Registry,
			},
			Runtime: v3Runtime{
				Containerd: v3Containerd{DefaultRuntimeName: cri.Containerd.DefaultRuntimeName, Runtimes: cri.Containerd.Runtimes},
				CNI:        v3CNI{BinDirs: []string{cri.CNI.BinDir}, ConfDir: cri.CNI.ConfDir},
			},
		},
	}
}
