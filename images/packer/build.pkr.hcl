# The node: Windows features, containerd, the Kubernetes binaries, CNI plugins, pre-pulled images, cloudbase-init
# with capwin's configuration, VMware Tools' settings on vSphere; then seal.ps1 runs sysprep.
build {
  sources = ["source.vsphere-iso.windows", "source.hyperv-iso.windows"]

  provisioner "powershell" {
    inline = ["New-Item -ItemType Directory -Force -Path C:\\Windows\\Temp\\capwin-image | Out-Null"]
  }
  provisioner "file" {
    content     = jsonencode(local.settings)
    destination = "C:\\Windows\\Temp\\capwin-image\\settings.json"
  }
  provisioner "file" {
    sources     = ["${path.root}/scripts/common.ps1", "${path.root}/scripts/seal.ps1"]
    destination = "C:\\Windows\\Temp\\capwin-image\\"
  }
  provisioner "file" {
    source      = "${path.root}/cloudbase-init/cloudbase-init-${local.hypervisor[source.type]}.conf"
    destination = "C:\\Windows\\Temp\\capwin-image\\cloudbase-init.conf"
  }
  provisioner "file" {
    source      = "${path.root}/cloudbase-init/cloudbase-init-unattend-${local.hypervisor[source.type]}.conf"
    destination = "C:\\Windows\\Temp\\capwin-image\\cloudbase-init-unattend.conf"
  }

  provisioner "powershell" {
    scripts = ["${path.root}/scripts/features.ps1"]
  }
  provisioner "windows-restart" {
    restart_timeout = "30m"
  }
  provisioner "powershell" {
    scripts = [
      "${path.root}/scripts/containerd.ps1",
      "${path.root}/scripts/kubernetes.ps1",
      "${path.root}/scripts/cni.ps1",
      "${path.root}/scripts/prepull.ps1",
      "${path.root}/scripts/cloudbase-init.ps1",
    ]
  }
  provisioner "powershell" {
    only    = ["vsphere-iso.windows"]
    scripts = ["${path.root}/scripts/vmware-tools.ps1"]
  }
}
