#!/usr/bin/env bash
# Writes the clusterctl repository of an air-gapped site's prerequisites into OUT/repository:
# Cluster API's core, kubeadm bootstrap and kubeadm control plane components (with metadata.yaml)
# and cert-manager's manifest, made from the pinned Go modules (the module proxy or its cache is
# all it needs), their images named REGISTRY/<image>:<version> (make release-offline builds them).
#
#   scripts/offline-repository.sh OUT REGISTRY
#
# OUT/repository/cluster-api/V/core-components.yaml, bootstrap-kubeadm/V/bootstrap-components.yaml,
# control-plane-kubeadm/V/control-plane-components.yaml (V: the Cluster API version of go.mod) and
# cert-manager/CM/cert-manager.yaml (CM: hack/e2e/certmanager's cert-manager version).
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 OUT REGISTRY" >&2; exit 2; }
out=$1 registry=${2%/}
root=$(cd "$(dirname "$0")/.." && pwd)
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly
capi_version=$(go -C "$root" list -m -f '{{.Version}}' sigs.k8s.io/cluster-api)
cm_version=$(go -C "$root/hack/e2e/certmanager" list -m -f '{{.Version}}' github.com/cert-manager/cert-manager)
capi_dir=$(go -C "$root" mod download -json "sigs.k8s.io/cluster-api@$capi_version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
[[ -d $capi_dir ]] || { echo "offline-repository: no sigs.k8s.io/cluster-api@$capi_version in the module cache" >&2; exit 1; }

mkdir -p "$out/repository"
echo "offline-repository: Cluster API $capi_version (core, kubeadm bootstrap, kubeadm control plane)" >&2
go -C "$root" run ./hack/e2e/capicomponents -module-dir "$capi_dir" -version "$capi_version" \
  -image-prefix "$registry/" -out "$out/repository"
echo "offline-repository: cert-manager $cm_version" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/hack/e2e/certmanager/build.sh" --manifest-only "$tmp" "$registry/"
mkdir -p "$out/repository/cert-manager/$cm_version"
cp "$tmp/cert-manager.yaml" "$out/repository/cert-manager/$cm_version/cert-manager.yaml"
echo "offline-repository: $out/repository" >&2
