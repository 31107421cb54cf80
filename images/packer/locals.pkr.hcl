locals {
  vm_name    = var.vm_name != "" ? var.vm_name : "windows-${var.windows_version}-kube-${var.kubernetes_version}"
  image_name = var.image_name != "" ? var.image_name : "Windows Server ${var.windows_version} SERVERDATACENTERCORE"
  # Which configuration files a build uploads, by builder.
  hypervisor = { "vsphere-iso" = "vsphere", "hyperv-iso" = "hyperv" }
  binaries   = ["kubelet.exe", "kubeadm.exe", "kube-proxy.exe", "kube-log-runner.exe"]
  # The provisioning scripts' settings: one JSON document (scripts/common.ps1 reads it).
  settings = {
    hypervIsolation    = var.hyperv_isolation
    images             = var.prepull_images
    pullTimeoutMinutes = var.pull_timeout_minutes
    cniPlugins         = var.cni_plugins
    containerd = {
      version = var.containerd_version
      url     = var.containerd_url != "" ? var.containerd_url : "https://github.com/containerd/containerd/releases/download/v${var.containerd_version}/containerd-${var.containerd_version}-windows-amd64.tar.gz"
      sha256  = var.containerd_sha256
    }
    kubernetes = {
      version  = var.kubernetes_version
      binaries = [for b in local.binaries : { name = b, url = "${var.kubernetes_base_url}/${var.kubernetes_version}/bin/windows/amd64/${b}", sha256 = var.kubernetes_sha256[b] }]
    }
    cloudbaseInit = {
      version = var.cloudbase_init_version
      url     = var.cloudbase_init_url != "" ? var.cloudbase_init_url : "https://github.com/cloudbase/cloudbase-init/releases/download/${var.cloudbase_init_version}/CloudbaseInitSetup_${replace(var.cloudbase_init_version, ".", "_")}_x64.msi"
      sha256  = var.cloudbase_init_sha256
    }
  }
  # The password as XML text (the answer file is XML).
  admin_password_xml = replace(replace(replace(var.admin_password, "&", "&amp;"), "<", "&lt;"), ">", "&gt;")
  # The answer file and the first-logon script, on a CD the builders attach.
  answer_cd = {
    "autounattend.xml" = templatefile("${path.root}/answer/autounattend.xml.pkrtpl", { image_name = local.image_name, admin_password = local.admin_password_xml })
    "first-logon.ps1"  = file("${path.root}/answer/first-logon.ps1")
  }
  # sysprep with cloudbase-init's Unattend.xml: generalize, then shut down (Packer's shutdown_command).
  seal = "powershell -NoProfile -ExecutionPolicy Bypass -File C:\\Windows\\Temp\\capwin-image\\seal.ps1"
}
