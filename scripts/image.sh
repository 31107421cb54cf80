#!/usr/bin/env bash
# Builds a capwin Windows node image with Packer from images/packer (docs/images.md).
#
#   scripts/image.sh vsphere|hyperv     (make image-vsphere / make image-hyperv)
#
# WINDOWS_VERSION (2022 or 2025) and IMAGE_VARS (your .pkrvars.hcl) choose what is built;
# PKR_VAR_admin_password and, on vSphere, PKR_VAR_vsphere_password come from the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
PACKER=${PACKER:-packer}
target=${1:-}
case "$target" in
vsphere) only=vsphere-iso.windows ;;
hyperv) only=hyperv-iso.windows ;;
*) echo "usage: $0 vsphere|hyperv" >&2; exit 2 ;;
esac
if ! command -v "$PACKER" >/dev/null; then
  echo "Packer is not installed: images/packer needs Packer 1.11 or later (docs/images.md)." >&2
  exit 1
fi
version=$("$PACKER" version | sed -n 's/^Packer v\([0-9.]*\).*/\1/p' | head -1)
if [ "$(printf '%s\n1.11.0\n' "$version" | sort -V | head -1)" != 1.11.0 ]; then
  echo "Packer $version is too old: images/packer needs 1.11 or later (required_plugins, templatefile)." >&2
  exit 1
fi
if [ -z "${IMAGE_VARS:-}" ] || [ ! -f "$IMAGE_VARS" ]; then
  echo "IMAGE_VARS must name your variables file (start from images/packer/example.pkrvars.hcl)." >&2
  exit 1
fi
if [ -z "${PKR_VAR_admin_password:-}" ]; then
  echo "Set PKR_VAR_admin_password: the build's Administrator password (sysprep generalizes it away)." >&2
  exit 1
fi
"$PACKER" init images/packer
"$PACKER" build -only="$only" -var "windows_version=${WINDOWS_VERSION:-2022}" -var-file="$IMAGE_VARS" images/packer
