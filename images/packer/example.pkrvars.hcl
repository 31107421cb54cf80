# An example of the values a site gives `make image-vsphere` / `make image-hyperv`
# (IMAGE_VARS=path/to/your.pkrvars.hcl). Copy it outside the repository and fill in your own;
# keep passwords out of the file: PKR_VAR_admin_password and PKR_VAR_vsphere_password in the
# environment set them. docs/images.md explains each value.

windows_version = "2022"
iso_url         = "/isos/SERVER_EVAL_x64FRE_en-us.iso"
iso_checksum    = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

kubernetes_version = "v1.36.3"
kubernetes_sha256 = {
  "kubelet.exe"         = "0000000000000000000000000000000000000000000000000000000000000000"
  "kubeadm.exe"         = "0000000000000000000000000000000000000000000000000000000000000000"
  "kube-proxy.exe"      = "0000000000000000000000000000000000000000000000000000000000000000"
  "kube-log-runner.exe" = "0000000000000000000000000000000000000000000000000000000000000000"
}
containerd_version     = "2.4.2"
containerd_sha256      = "0000000000000000000000000000000000000000000000000000000000000000"
cloudbase_init_version = "1.1.8"
cloudbase_init_sha256  = "0000000000000000000000000000000000000000000000000000000000000000"
prepull_images = [
  "registry.k8s.io/pause:3.10",
  "registry.example.com/capwin/capwin-kube-proxy-windows:v1.36.3",
]

# Air-gapped: the same files from your own share or mirror (each still checked by its SHA-256).
# kubernetes_base_url = "\\\\fileserver\\k8s-release"
# containerd_url      = "\\\\fileserver\\containerd\\containerd-2.4.2-windows-amd64.tar.gz"
# cloudbase_init_url  = "\\\\fileserver\\cloudbase-init\\CloudbaseInitSetup_1_1_8_x64.msi"

# vSphere (make image-vsphere)
vcenter_server     = "vcenter.example.com"
vsphere_username   = "packer@vsphere.local"
vsphere_datacenter = "dc1"
vsphere_cluster    = "cluster1"
vsphere_datastore  = "datastore1"
vsphere_folder     = "templates"
vsphere_network    = "VM Network"
vsphere_iso_path   = "[datastore1] iso/SERVER_EVAL_x64FRE_en-us.iso"

# Hyper-V (make image-hyperv, on a Hyper-V host)
hyperv_switch    = "External"
output_directory = "output-hyperv"
