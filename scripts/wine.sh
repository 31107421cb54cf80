#!/usr/bin/env bash
# Installs Debian's wine64 (Wine 8.0 on Debian 12) for the Windows-binaries stage when it is
# missing, and prints the path of wine64. test/integration/winebin makes its own prefix and adds what Go
# programs need to start there (a bcryptprimitives.dll that Wine 8 lacks).
set -euo pipefail

found() {
  command -v wine64 2>/dev/null || { [[ -x /usr/lib/wine/wine64 ]] && echo /usr/lib/wine/wine64; }
}
if path=$(found); then
  echo "$path"
  exit 0
fi
die() { echo "wine.sh: $*" >&2; exit 1; }
command -v apt-get >/dev/null || die "wine64 is missing: install Wine 8 or later (no apt-get here to do it)"
[[ $(id -u) == 0 ]] || die "wine64 is missing: install it (apt-get install wine64), or run this as root so that apt-get can"
echo "wine.sh: installing Debian's wine64 (a few minutes)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q wine64 >/dev/null 2>&1 || {
  apt-get update -q >/dev/null || die "apt-get update failed: Debian's package mirror must be reachable"
  apt-get install -y -q wine64 >/dev/null || die "apt-get install wine64 failed"
}
found || die "wine64 is not where Debian puts it (/usr/lib/wine/wine64)"
