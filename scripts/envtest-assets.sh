#!/usr/bin/env bash
# Builds the envtest binaries from source (no downloads of prebuilt binaries are possible here)
# into a cache outside the repository and prints the directory for KUBEBUILDER_ASSETS.
#
#   scripts/envtest-assets.sh                      kube-apiserver + etcd
#   scripts/envtest-assets.sh --workload           + kube-scheduler + kube-controller-manager
#   scripts/envtest-assets.sh --node               + kubelet, kubeadm, kubectl, kube-proxy (the kind node image)
#   scripts/envtest-assets.sh --windows            only kubelet.exe, kubeadm.exe, kube-proxy.exe for windows/amd64
#                                                  (the Windows-binaries stage, scripts/windows-binaries.sh)
#   scripts/envtest-assets.sh --kubelet-flags      only kubelet-flags.exe for windows/amd64: hack/kubelet-flags, which
#                                                  prints the kubelet's flags (make kubelet-flags)
#   scripts/envtest-assets.sh [--workload] --check  exit 1 when a binary is missing (no build)
#
# A second run with the binaries present does nothing but print the path.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
CACHE=${CAPWIN_CACHE:-$HOME/.cache/capwin}
OUT="$CACHE/envtest/$K8S_VERSION"
GOOS_OUT=
EXT=

components=(kube-apiserver etcd)
check=false
for arg in "$@"; do
  case "$arg" in
    --workload) components+=(kube-scheduler kube-controller-manager) ;;
    --node) components+=(kubelet kubeadm kubectl kube-proxy) ;;
    --windows) components=(kubelet kubeadm kube-proxy); GOOS_OUT=windows; EXT=.exe; OUT="$CACHE/windows/kubernetes/$K8S_VERSION" ;;
    --kubelet-flags) components=(kubelet-flags); GOOS_OUT=windows; EXT=.exe; OUT="$CACHE/windows/kubernetes/$K8S_VERSION" ;;
    --check) check=true ;;
    *) echo "envtest-assets: unknown argument $arg" >&2; exit 2 ;;
  esac
done

missing=()
for c in "${components[@]}"; do
  [[ -x "$OUT/$c$EXT" ]] || missing+=("$c")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "$OUT"
  exit 0
fi
$check && exit 1

log() { echo "envtest-assets: $*" >&2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/retry.sh
source "$(dirname "$0")/retry.sh"
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

# kube_pkg is the package whose dependencies a binary needs (kubectl and kubeadm have no app package at cmd/NAME/app).
kube_pkg() {
  case "$1" in
    kubectl) echo "k8s.io/kubectl/pkg/cmd" ;;
    kubeadm) echo "k8s.io/kubernetes/cmd/kubeadm/app" ;;
    kubelet-flags) echo "k8s.io/kubernetes/cmd/kubelet/app/options" ;;
    *) echo "k8s.io/kubernetes/cmd/$1/app" ;;
  esac
}

build_kube() {
  local bins=("$@")
  local minor=${K8S_VERSION#v1.}
  local staging="v0.$minor"
  mkdir -p "$work/kube" && cd "$work/kube"
  {
    echo "module capwin.local/envtest-kube"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
  } > go.mod
  # k8s.io/kubernetes replaces its staging modules with ./staging paths; a consumer must pin them.
  local modfile
  modfile=$(retry 4 go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  grep -oE 'k8s.io/[a-z0-9-]+ => \./staging' "$modfile" | awk '{print $1}' |
    grep -v '^k8s.io/sample-cli-plugin$' |
    while read -r m; do echo "replace $m => $m $staging"; done >> go.mod
  {
    echo "package main"
    echo "import ("
    for b in "${bins[@]}"; do echo "	_ \"$(kube_pkg "$b")\""; done
    echo ")"
    echo "func main() {}"
  } > tools.go
  # kubelet-flags is our program (hack/kubelet-flags), built in this module without its ignore tag.
  if [[ " ${bins[*]} " == *" kubelet-flags "* ]]; then
    mkdir -p kubelet-flags
    sed '/^\/\/go:build ignore$/d' "$repo/hack/kubelet-flags/main.go" > kubelet-flags/main.go
  fi
  retry 4 go mod tidy >&2
  rm tools.go
  local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor%%.*} -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  for b in "${bins[@]}"; do
    log "building $b $K8S_VERSION ${GOOS_OUT} (a few minutes the first time)"
    local pkg="k8s.io/kubernetes/cmd/$b"
    [[ $b == kubelet-flags ]] && pkg=./kubelet-flags
    GOOS=${GOOS_OUT:-$(go env GOHOSTOS)} go build -trimpath -ldflags "$ld" -o "$OUT/$b.tmp" "$pkg"
    chmod +x "$OUT/$b.tmp"
    mv "$OUT/$b.tmp" "$OUT/$b$EXT"
  done
}

build_etcd() {
  log "building etcd $ETCD_VERSION"
  mkdir -p "$work/etcd" && cd "$work/etcd"
  cat > go.mod <<MOD
module capwin.local/envtest-etcd

go 1.26

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  retry 4 go mod tidy >&2
  go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" .
  mv "$OUT/etcd.tmp" "$OUT/etcd"
}

kube=()
for c in "${missing[@]}"; do
  case "$c" in
    etcd) build_etcd ;;
    *) kube+=("$c") ;;
  esac
done
if [[ ${#kube[@]} -gt 0 ]]; then build_kube "${kube[@]}"; fi

echo "$OUT"
