package guest

import (
	"context"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// cannotRun says why containerd on this node would refuse a Pod's containers ("" = they run):
// the Pod's runtime handler (its RuntimeClass's, else containerd's default) must be configured
// in the containerd config the bootstrap wrote, and a process-isolated Windows container must
// come from an image of the host's build — hcsshim refuses another build, which is why an app
// that outlives an OS upgrade runs Hyper-V isolated or selects nodes by windows-build. The image
// build is read from its tag (…-ltsc2022, …-ltsc2025), the way Microsoft tags its base images;
// an image without such a tag is taken to match.
func (k *kubelet) cannotRun(ctx context.Context, pod *corev1.Pod) (string, error) {
	runtimes, def := k.containerdRuntimes()
	handler := def
	if name := pod.Spec.RuntimeClassName; name != nil {
		rc, err := k.client.NodeV1().RuntimeClasses().Get(ctx, *name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("RuntimeClass %s: %w", *name, err)
		}
		handler = rc.Handler
	}
	if !runtimes[handler] {
		return fmt.Sprintf("failed to get sandbox runtime: no runtime for %q is configured", handler), nil
	}
	if handler != userdata.RuntimeProcess {
		return "", nil // Hyper-V isolation runs images of older builds in a utility VM
	}
	for _, c := range pod.Spec.Containers {
		if build, ok := imageBuild(c.Image); ok && build != k.g.cfg.Build {
			return fmt.Sprintf("container %s: image %s is built for Windows 10.0.%d, the host runs 10.0.%d: "+
				"The container operating system does not match the host operating system.", c.Name, c.Image, build, k.g.cfg.Build), nil
		}
	}
	return "", nil
}

// containerdRuntimes reads the runtime handlers and the default one from containerd's config.
func (k *kubelet) containerdRuntimes() (map[string]bool, string) {
	var cfg struct {
		Plugins map[string]struct {
			Containerd struct {
				DefaultRuntimeName string         `toml:"default_runtime_name"`
				Runtimes           map[string]any `toml:"runtimes"`
			} `toml:"containerd"`
		} `toml:"plugins"`
	}
	data, _ := k.g.fs.read(k.g.containerdConfig())
	out := map[string]bool{}
	if err := toml.Unmarshal(data, &cfg); err != nil {
		return out, ""
	}
	cri := cfg.Plugins[`io.containerd.grpc.v1.cri`].Containerd
	for name := range cri.Runtimes {
		out[name] = true
	}
	return out, cri.DefaultRuntimeName
}

// imageBuild maps a Windows image tag to the build it was made for.
func imageBuild(image string) (uint16, bool) {
	tag := image[strings.LastIndex(image, ":")+1:]
	for suffix, build := range map[string]uint16{"ltsc2019": 17763, "ltsc2022": 20348, "ltsc2025": 26100} {
		if strings.HasSuffix(tag, suffix) {
			return build, true
		}
	}
	return 0, false
}
