# vSphere: a VM template (or a content library VM template item) for capwin's VCenterMachine
# template field. `make image-vsphere` builds it (docs/images.md).

variable "vcenter_server" {
  type    = string
  default = ""
}
variable "vsphere_username" {
  type    = string
  default = ""
}
variable "vsphere_password" {
  type      = string
  default   = ""
  sensitive = true
}
variable "vsphere_insecure" {
  type        = bool
  default     = false
  description = "Skip the check of vCenter's certificate (a lab only)."
}
variable "vsphere_datacenter" {
  type    = string
  default = ""
}
variable "vsphere_cluster" {
  type    = string
  default = ""
}
variable "vsphere_datastore" {
  type    = string
  default = ""
}
variable "vsphere_folder" {
  type    = string
  default = ""
}
variable "vsphere_network" {
  type    = string
  default = "VM Network"
}
variable "vsphere_iso_path" {
  type        = string
  default     = ""
  description = "The Windows Server ISO on a datastore ([datastore1] iso/windows.iso); empty: iso_url is uploaded."
}
variable "vsphere_tools_iso_path" {
  type        = string
  default     = "[] /vmimages/tools-isoimages/windows.iso"
  description = "VMware Tools for Windows, as the ESXi hosts serve it; the first logon installs it."
}
variable "vsphere_content_library" {
  type        = string
  default     = ""
  description = "A content library to put the template in as a VM template item (capwin's contentLibrary); empty: a VM template in vsphere_folder."
}

source "vsphere-iso" "windows" {
  vcenter_server      = var.vcenter_server
  username            = var.vsphere_username
  password            = var.vsphere_password
  insecure_connection = var.vsphere_insecure
  datacenter          = var.vsphere_datacenter
  cluster             = var.vsphere_cluster
  datastore           = var.vsphere_datastore
  folder              = var.vsphere_folder

  vm_name       = local.vm_name
  notes         = "capwin Windows Server ${var.windows_version} node, Kubernetes ${var.kubernetes_version}, containerd ${var.containerd_version}, cloudbase-init ${var.cloudbase_init_version} (images/packer)"
  guest_os_type = var.windows_version == "2025" ? "windows2022srvNext_64Guest" : "windows2019srvNext_64Guest"
  firmware      = "efi-secure"
  CPUs          = 4
  RAM           = 8192
  # Windows setup has LSI Logic SAS's driver built in (not VMware Paravirtual's); the data disks
  # of capwin's dataDisks go on this controller's free units.
  disk_controller_type = ["lsilogic-sas"]
  storage {
    disk_size             = var.disk_size_mib
    disk_thin_provisioned = true
  }
  network_adapters {
    network      = var.vsphere_network
    network_card = "vmxnet3"
  }

  iso_paths    = compact([var.vsphere_iso_path, var.vsphere_tools_iso_path])
  iso_url      = var.vsphere_iso_path == "" ? var.iso_url : null
  iso_checksum = var.vsphere_iso_path == "" ? var.iso_checksum : null
  cd_content   = local.answer_cd
  cd_label     = "ANSWER"
  remove_cdrom = true
  boot_wait    = "3s"
  boot_command = ["<spacebar><wait><spacebar>"]

  communicator     = "winrm"
  winrm_username   = "Administrator"
  winrm_password   = var.admin_password
  winrm_use_ssl    = true
  winrm_insecure   = true
  winrm_timeout    = "2h"
  shutdown_command = local.seal
  shutdown_timeout = "30m"

  convert_to_template = var.vsphere_content_library == ""
  dynamic "content_library_destination" {
    for_each = var.vsphere_content_library == "" ? [] : [var.vsphere_content_library]
    content {
      library = content_library_destination.value
      name    = local.vm_name
      ovf     = false
      destroy = true
    }
  }
}
