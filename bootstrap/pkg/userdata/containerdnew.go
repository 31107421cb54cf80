package userdata

// containerd 2.1 and 2.2 read config version 3 as it is, 2.3 and later version 4 (an older file
// is converted at every start, with a log line). Version 3 splits the CRI plugin in an image
// plugin and a runtime plugin, the sandbox image is a pinned image and the CNI binaries are a
// list of folders; version 4 moves the server's gRPC address into a plugin of its own.
type containerdConfigV3 struct {
	Version int             `toml:"version"`
	Root    string          `toml:"root"`
	State   string          `toml:"state"`
	GRPC    *containerdGRPC `toml:"grpc,omitempty"`
	Plugins v3Plugins       `toml:"plugins"`
}

type v3Plugins struct {
	Images  v3Images        `toml:"io.containerd.cri.v1.images"`
	Runtime v3Runtime       `toml:"io.containerd.cri.v1.runtime"`
	GRPC    *containerdGRPC `toml:"io.containerd.server.v1.grpc,omitempty"`
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

// newer is the same configuration as cfg (version 2) in version 3 or 4.
func (cfg containerdConfig) newer(version int) containerdConfigV3 {
	cri := cfg.Plugins.CRI
	grpc := cfg.GRPC
	out := containerdConfigV3{
		Version: version,
		Root:    cfg.Root,
		State:   cfg.State,
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
	if version >= 4 {
		out.Plugins.GRPC = &grpc
	} else {
		out.GRPC = &grpc
	}
	return out
}
