# Hyper-V: a generalized generation 2 VHDX for capwin's HyperVMachine parentDisk (copy it to each
# host) or parentDiskSource. `make image-hyperv` builds it on a Hyper-V host (docs/images.md).

variable "hyperv_switch" {
  type        = string
  default     = "Default Switch"
  description = "The virtual switch the build VM uses (it needs to reach the downloads, or your share)."
}
variable "output_directory" {
  type        = string
  default     = "output-hyperv"
  description = "Where the exported VM goes: its Virtual Hard Disks folder holds <vm_name>.vhdx."
}

source "hyperv-iso" "windows" {
  iso_url              = var.iso_url
  iso_checksum         = var.iso_checksum
  vm_name              = local.vm_name
  output_directory     = var.output_directory
  generation           = 2
  enable_secure_boot   = true
  secure_boot_template = "MicrosoftWindows"
  cpus                 = 4
  memory               = 8192
  disk_size            = var.disk_size_mib
  switch_name          = var.hyperv_switch
  headless             = true

  cd_content   = local.answer_cd
  cd_label     = "ANSWER"
  boot_wait    = "1s"
  boot_command = ["<spacebar><wait><spacebar>"]

  communicator     = "winrm"
  winrm_username   = "Administrator"
  winrm_password   = var.admin_password
  winrm_use_ssl    = true
  winrm_insecure   = true
  winrm_timeout    = "2h"
  shutdown_command = local.seal
  shutdown_timeout = "30m"
}
