# The Packer version and plugins the recipe is written for (docs/images.md). `packer init .` installs
# the plugins; an air-gapped site installs them from its own copies (`packer plugins install --path`).
packer {
  required_version = ">= 1.11.0"
  required_plugins {
    vsphere = {
      source  = "github.com/hashicorp/vsphere"
      version = "~> 2.0"
    }
    hyperv = {
      source  = "github.com/hashicorp/hyperv"
      version = "~> 1.1"
    }
  }
}
