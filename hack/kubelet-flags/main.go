//go:build ignore

// Command kubelet-flags prints the command-line flags of the kubelet it is built against, one a
// line: the name, a tab, and the kubelet's deprecation message (empty when the flag is not
// deprecated), after a header line naming the kubelet version and platform.
//
// It builds the flag set as k8s.io/kubernetes/cmd/kubelet/app.NewKubeletCommand does (v1.31 to
// v1.37 register it the same way) from the options package alone, which costs a fraction of a
// whole kubelet build. Build it for GOOS=windows: the Windows kubelet registers its own flags
// (--windows-service, --windows-priorityclass) and lacks Linux-only ones. It is not part of the
// capwin module (build tag ignore): scripts/envtest-assets.sh --kubelet-flags builds it in a
// module that requires k8s.io/kubernetes at the version wanted, and `make kubelet-flags` runs it
// and writes bootstrap/pkg/kubeletflags/sets.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/logs/json/register" // the kubelet's main imports it: --log-json-* flags
	"k8s.io/component-base/version"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
)

func main() {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	kubeletFlags := options.NewKubeletFlags()
	kubeletConfig, err := options.NewKubeletConfiguration()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-flags: new kubelet configuration:", err)
		os.Exit(1)
	}
	kubeletFlags.AddFlags(fs)
	options.AddKubeletConfigFlags(fs, kubeletConfig)
	options.AddGlobalFlags(fs)
	fs.BoolP("help", "h", false, "help for kubelet")

	fmt.Printf("# kubelet %s %s/%s flags (hack/kubelet-flags): name<TAB>deprecation message\n",
		version.Get().GitVersion, runtime.GOOS, runtime.GOARCH)
	fs.VisitAll(func(f *pflag.Flag) {
		fmt.Printf("%s\t%s\n", f.Name, strings.Join(strings.Fields(f.Deprecated), " "))
	})
}
