package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// A Windows HostProcess container runs on the host, with the host's Windows: its image needs no
// Windows base layers, only its own files. Windows layers keep the filesystem under Files/ and
// registry changes under Hives/. ko is not used here: it puts one binary at C:\ko-app\<last
// element of the import path> without .exe, where the start scripts of the templates' addons
// run flanneld.exe and kube-proxy.exe from the image's root.

var windowsAMD64 = v1.Platform{OS: "windows", Architecture: "amd64"}

// hostProcessImage describes one image: the program built into its root (the container's
// mount, $env:CONTAINER_SANDBOX_MOUNT_POINT).
type hostProcessImage struct {
	exe string
	src goSource
}

func flanneldImage(version string) hostProcessImage {
	return hostProcessImage{exe: "flanneld.exe", src: goSource{
		module: "github.com/flannel-io/flannel", version: version, pkg: "github.com/flannel-io/flannel",
		ldflags: []string{"-X github.com/flannel-io/flannel/pkg/version.Version=" + version},
	}}
}

// nodeHealthImage is capwin's Windows node health checker (the node-health addon), built from
// this repository.
func nodeHealthImage(root, version string) hostProcessImage {
	return hostProcessImage{exe: "capwin-node-health.exe", src: goSource{
		module: "github.com/capwin/capwin", version: version, pkg: "github.com/capwin/capwin/nodehealth", root: root,
	}}
}

// windowsExporterImage is prometheus-community's windows_exporter (the monitoring addon).
func windowsExporterImage(version string) hostProcessImage {
	return hostProcessImage{exe: "windows_exporter.exe", src: goSource{
		module: "github.com/prometheus-community/windows_exporter", version: version, pkg: "github.com/prometheus-community/windows_exporter",
		ldflags: []string{"-X github.com/prometheus/common/version.Version=" + strings.TrimPrefix(version, "v")},
	}}
}

func kubeProxyImage(version string) hostProcessImage {
	var major, minor, patch int
	_, _ = fmt.Sscanf(version, "v%d.%d.%d", &major, &minor, &patch)
	ld := []string{}
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ld = append(ld, "-X "+pkg+".gitVersion="+version, "-X "+pkg+".gitTreeState=clean",
			fmt.Sprintf("-X %s.gitMajor=%d", pkg, major), fmt.Sprintf("-X %s.gitMinor=%d", pkg, minor))
	}
	return hostProcessImage{exe: "kube-proxy.exe", src: goSource{
		module: "k8s.io/kubernetes", version: version, pkg: "k8s.io/kubernetes/cmd/kube-proxy", ldflags: ld,
		staging: fmt.Sprintf("v0.%d.%d", minor, patch),
	}}
}

// buildHostProcess builds the image for windows/amd64 and writes the SPDX SBOM of its program
// to sbomFile.
func buildHostProcess(ctx context.Context, o options, h hostProcessImage, sbomFile string) (v1.ImageIndex, error) {
	tmp, err := os.MkdirTemp("", "capwin-windows")
	if err != nil {
		return nil, err
	}
	defer removeTemp(tmp)
	exe := filepath.Join(tmp, h.exe)
	if err := buildGo(ctx, h.src, windowsAMD64.OS, windowsAMD64.Architecture, exe); err != nil {
		return nil, err
	}
	body, err := os.ReadFile(exe) //nolint:gosec // G304: the binary just built into this build's temporary folder
	if err != nil {
		return nil, err
	}
	sbom, err := spdxOf(exe, h.src, o.created)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(sbomFile, sbom, 0o644); err != nil {
		return nil, err
	}
	base, err := windowsBaseLayer(o.created)
	if err != nil {
		return nil, err
	}
	app, err := layer([]entry{
		{name: "Files", mode: 0o555, dir: true},
		{name: "Files/" + h.exe, mode: 0o555, body: body, pax: executable},
		{name: "Hives", mode: 0o555, dir: true},
	}, o.created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base, app)
	if err != nil {
		return nil, err
	}
	// No entrypoint: the DaemonSets run their start script with powershell.exe. PATH names
	// PowerShell's folder, as Microsoft's HostProcess image examples set it.
	img, err = withConfig(img, windowsAMD64, o.created, v1.Config{
		Env: []string{`PATH=C:\Windows\system32;C:\Windows;C:\Windows\System32\WindowsPowerShell\v1.0\`},
	})
	if err != nil {
		return nil, err
	}
	return index(img)
}

// executable is the tar record of a Windows file's security descriptor (owner and group
// BUILTIN\Users), which Windows needs to run a program from an image layer.
var executable = map[string]string{
	"MSWINDOWS.rawsd": base64.StdEncoding.EncodeToString(securityDescriptor(sidUsers, sidUsers, 0)),
}

// windowsBaseLayer holds the registry hives Windows checks when it unpacks a base layer.
func windowsBaseLayer(mtime time.Time) (v1.Layer, error) {
	entries := []entry{{name: "Files", mode: 0o555, dir: true}}
	dir := "Files"
	for _, d := range []string{"Windows", "System32", "config"} {
		dir += "/" + d
		entries = append(entries, entry{name: dir, mode: 0o555, dir: true})
	}
	for _, n := range hiveNames {
		entries = append(entries, entry{name: dir + "/" + n, mode: 0o444, body: emptyHive(n)})
	}
	return layer(append(entries, entry{name: "Hives", mode: 0o555, dir: true}), mtime)
}
