# What every build needs. The checksums have no defaults: take them from the publisher (dl.k8s.io's
# .sha256 files, containerd's release .sha256sum files, cloudbase-init's release) or from your own
# share, never from the same place as the file alone (docs/images.md).

variable "windows_version" {
  type        = string
  description = "Windows Server release: 2022 (build 20348) or 2025 (build 26100)."
  validation {
    condition     = contains(["2022", "2025"], var.windows_version)
    error_message = "The windows_version must be 2022 or 2025."
  }
}

variable "image_name" {
  type        = string
  default     = ""
  description = "The install.wim image to install (/IMAGE/NAME). Default: Windows Server <version> SERVERDATACENTERCORE (Datacenter, Server Core)."
}

variable "iso_url" {
  type        = string
  default     = ""
  description = "The Windows Server ISO: a URL or a local path (Hyper-V; vSphere when vsphere_iso_path is empty)."
}

variable "iso_checksum" {
  type        = string
  default     = "none"
  description = "Checksum of iso_url, as Packer reads it (sha256:<hex>)."
}

variable "admin_password" {
  type        = string
  sensitive   = true
  description = "The build's Administrator password (Packer's WinRM login). sysprep generalizes the image afterwards."
}

variable "disk_size_mib" {
  type        = number
  default     = 81920
  description = "System disk size in MiB (capwin's diskGiB can grow it on full clones, never shrink it)."
}

variable "kubernetes_version" {
  type        = string
  default     = "v1.36.3"
  description = "Kubernetes version of kubelet.exe, kubeadm.exe, kube-proxy.exe and kube-log-runner.exe: the Machines' spec.version."
}

variable "kubernetes_base_url" {
  type        = string
  default     = "https://dl.k8s.io/release"
  description = "Where <version>/bin/windows/amd64/<binary> is fetched from: dl.k8s.io, a mirror, or a share path."
}

variable "kubernetes_sha256" {
  type        = map(string)
  description = "SHA-256 of kubelet.exe, kubeadm.exe, kube-proxy.exe and kube-log-runner.exe of kubernetes_version, by file name."
}

variable "containerd_version" {
  type        = string
  default     = "2.4.2"
  description = "containerd release of the nodes (docs/compatibility.md: 1.7 and 2.x)."
}

variable "containerd_url" {
  type        = string
  default     = ""
  description = "containerd's Windows archive. Default: its GitHub release, containerd-<version>-windows-amd64.tar.gz."
}

variable "containerd_sha256" {
  type        = string
  description = "SHA-256 of the containerd archive."
}

variable "cloudbase_init_version" {
  type        = string
  default     = "1.1.8"
  description = "cloudbase-init release (1.1.5 or later: older ones ignore static addresses)."
}

variable "cloudbase_init_url" {
  type        = string
  default     = ""
  description = "cloudbase-init's MSI. Default: its GitHub release, CloudbaseInitSetup_<version with _>_x64.msi."
}

variable "cloudbase_init_sha256" {
  type        = string
  description = "SHA-256 of the cloudbase-init MSI."
}

variable "prepull_images" {
  type        = list(string)
  default     = ["registry.k8s.io/pause:3.10"]
  description = "Images pulled into containerd's k8s.io namespace: the pause image (the WindowsConfig's containerd.pauseImage) and the addons' images (kube-proxy for Windows, flanneld, ...)."
}

variable "cni_plugins" {
  type = list(object({
    name   = string
    url    = string
    sha256 = string
  }))
  default     = []
  description = "CNI plugins for C:\\opt\\cni\\bin: the -flannel flavors need flannel.exe, sdnoverlay.exe and host-local.exe (docs/flavors.md); the Calico flavors none."
}

variable "pull_timeout_minutes" {
  type        = number
  default     = 30
  description = "How long each image pull may take."
}

variable "hyperv_isolation" {
  type        = bool
  default     = false
  description = "Also install the Hyper-V role, for pods with Hyper-V isolation (the windows-hyperv RuntimeClass)."
}

variable "vm_name" {
  type        = string
  default     = ""
  description = "Name of the template (vSphere) or exported VM (Hyper-V). Default: windows-<version>-kube-<kubernetes_version>."
}
