package addons

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// credentials are vCenter values with characters that end a quoted YAML string.
var credentials = map[string]string{
	"VSPHERE_SERVER": "vcenter.example.com:8443", "VSPHERE_TLS_THUMBPRINT": "AA:BB", "VSPHERE_DATACENTER": "dc1",
	"VSPHERE_USERNAME": `it's "me"`, "VSPHERE_PASSWORD": ` p'a"s#s: {w} \x `,
}

// TestStorage checks the optional storage addon of each infrastructure: csi-proxy on the Windows
// nodes, and the install Job of the infrastructure's CSI driver (vSphere with its Windows node
// support, SMB) with pinned versions; on vCenter the login reaches the Job's Secret unchanged.
func TestStorage(t *testing.T) {
	for infra, driver := range map[string]map[string]string{
		VCenter: {"DRIVER": "vsphere", "VERSION": "v3.7.0", "MANIFESTS_URL": "https://raw.githubusercontent.com/kubernetes-sigs/vsphere-csi-driver"},
		HyperV:  {"DRIVER": "smb", "VERSION": "v1.20.1", "MANIFESTS_URL": "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-smb/master/deploy"},
	} {
		g := NewWithT(t)
		objs := decode(t, processedManifests(t, Selection{CNI: "calico", Infrastructure: infra}, "storage", credentials))
		proxy := container(t, objs, "DaemonSet csi-proxy")
		g.Expect(proxy.Image).To(Equal("ghcr.io/kubernetes-sigs/sig-windows/csi-proxy:v1.1.3"))
		g.Expect(proxy.Command[0]).To(Equal("$env:CONTAINER_SANDBOX_MOUNT_POINT/csi-proxy.exe"))
		job := container(t, objs, "Job capwin-storage-install")
		for k, v := range driver {
			g.Expect(env(job)).To(HaveKeyWithValue(k, v), infra)
		}
		if infra == VCenter {
			for _, o := range objs {
				if s, ok := o.typed.(*corev1.Secret); ok {
					g.Expect(s.StringData).To(Equal(map[string]string{"username": credentials["VSPHERE_USERNAME"], "password": credentials["VSPHERE_PASSWORD"]}))
				}
			}
			g.Expect(env(job)).To(HaveKeyWithValue("VSPHERE_SERVER", credentials["VSPHERE_SERVER"]))
		}
	}
	script := string(scriptFile(t, "install-storage.sh"))
	g := NewWithT(t)
	g.Expect(script).To(ContainSubstring("csi-windows-support"))
	g.Expect(script).To(ContainSubstring("csi-smb-node-windows.yaml"))
}
