#!/usr/bin/env bash
# Builds the Windows programs of the Windows-binaries stage (make test-windows, test/integration/winebin) from
# the Go module proxy, for windows/amd64 with CGO off, into a cache outside the repository, and
# prints that folder (CAPWIN_WINDOWS_BINARIES):
#
#   kubernetes/<version>/{kubelet,kubeadm,kube-proxy}.exe   the oldest and the newest Kubernetes minor
#                                                           docs/compatibility.md supports for Windows nodes
#   kubernetes/<version>/kube-log-runner.exe                the kubelet service's wrapper, from the
#                                                           k8s.io/component-base of that version
#   containerd/<version>/containerd.exe                     each containerd line (1.7 and 2.x)
#   flannel/<version>/flanneld.exe                          the flanneld the addons ship (FLANNEL_VERSION)
#   windows-exporter/<version>/windows_exporter.exe         the node metrics addon's (WINDOWS_EXPORTER_VERSION)
#
#   scripts/windows-binaries.sh            build what is missing (the first run takes long: three
#                                          kubelets' worth of Kubernetes per version), print the folder
#   scripts/windows-binaries.sh --check    exit 1 when a program is missing (no build)
#   scripts/windows-binaries.sh --versions print the versions, one "family version" a line
#
# The module proxy here is sparse for old patch releases: v1.31.4 is the newest v1.31 whose whole
# module graph it serves (v1.31.5 to v1.31.13 each lack a staging module of the kubelet or kubeadm).
set -euo pipefail
cd "$(dirname "$0")/.."

KUBERNETES=(v1.31.4 v1.37.2)
CONTAINERD=(v1.7.35 v2.4.2)
FLANNEL_VERSION=${FLANNEL_VERSION:-v0.27.4}
WINDOWS_EXPORTER_VERSION=${WINDOWS_EXPORTER_VERSION:-v0.27.2}
CACHE=${CAPWIN_CACHE:-$HOME/.cache/capwin}
OUT="$CACHE/windows"

programs() {
  for v in "${KUBERNETES[@]}"; do for b in kubelet kubeadm kube-proxy kube-log-runner; do echo "kubernetes $v $b.exe"; done; done
  for v in "${CONTAINERD[@]}"; do echo "containerd $v containerd.exe"; done
  echo "flannel $FLANNEL_VERSION flanneld.exe"
  echo "windows-exporter $WINDOWS_EXPORTER_VERSION windows_exporter.exe"
}

case "${1:-}" in
  --versions) programs | awk '{print $1, $2}' | uniq; exit 0 ;;
  --check)
    programs | while read -r family version exe; do [[ -x "$OUT/$family/$version/$exe" ]] || exit 1; done
    exit $? ;;
  "") ;;
  *) echo "windows-binaries: unknown argument $1" >&2; exit 2 ;;
esac

log() { echo "windows-binaries: $*" >&2; }
# shellcheck source=scripts/retry.sh
source scripts/retry.sh
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0 GOOS=windows GOARCH=amd64

# build MODULE VERSION PACKAGE OUT [LDFLAGS]: one program of a module at a version, through a
# throwaway module that requires it (its go.mod's requirements taken as they are, as hack/images does).
build() {
  local module=$1 version=$2 pkg=$3 out=$4 ldflags=${5:-}
  [[ -x "$out" ]] && return 0
  log "building $(basename "$out") $version (several minutes the first time)"
  local work
  work=$(mktemp -d)
  mkdir -p "$(dirname "$out")"
  (
    cd "$work"
    printf 'module capwin.local/windows-binaries\n\ngo 1.26\n\nrequire %s %s\n' "$module" "$version" > go.mod
    retry 4 go list -deps "$pkg" >/dev/null # resolves and downloads (GOFLAGS=-mod=mod)
    go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg"
  )
  rm -rf "$work"
  mv "$out.tmp" "$out"
  chmod +x "$out"
}

for v in "${CONTAINERD[@]}"; do
  module=github.com/containerd/containerd
  [[ $v == v1.* ]] || module=$module/v${v:1:1}
  build "$module" "$v" "$module/cmd/containerd" "$OUT/containerd/$v/containerd.exe" \
    "-X $module/version.Version=$v"
done
build github.com/flannel-io/flannel "$FLANNEL_VERSION" github.com/flannel-io/flannel \
  "$OUT/flannel/$FLANNEL_VERSION/flanneld.exe" "-X github.com/flannel-io/flannel/pkg/version.Version=$FLANNEL_VERSION"
build github.com/prometheus-community/windows_exporter "$WINDOWS_EXPORTER_VERSION" github.com/prometheus-community/windows_exporter \
  "$OUT/windows-exporter/$WINDOWS_EXPORTER_VERSION/windows_exporter.exe" \
  "-X github.com/prometheus/common/version.Version=${WINDOWS_EXPORTER_VERSION#v}"
for v in "${KUBERNETES[@]}"; do
  K8S_VERSION=$v GOOS= scripts/envtest-assets.sh --windows >/dev/null
  build k8s.io/component-base "v0.${v#v1.}" k8s.io/component-base/logs/kube-log-runner "$OUT/kubernetes/$v/kube-log-runner.exe"
done

echo "$OUT"
