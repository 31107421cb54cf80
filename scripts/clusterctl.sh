#!/usr/bin/env bash
# Builds clusterctl (sigs.k8s.io/cluster-api/cmd/clusterctl at the version test/go.mod pins, the
# Cluster API capwin is tested with) into OUT, stamped with that version as Cluster API's release
# stamps it, so `clusterctl version` names it. make clusterctl; the doc test builds it the same way.
#
#   scripts/clusterctl.sh OUT        e.g. scripts/clusterctl.sh bin/clusterctl
#
# (`go install sigs.k8s.io/cluster-api/cmd/clusterctl@VERSION` is refused: Cluster API's go.mod
# has replace directives.)
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 OUT" >&2; exit 2; }
mkdir -p "$(dirname "$1")"
out=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
export GOTOOLCHAIN=local CGO_ENABLED=0
version=$(go -C "$root/test" list -m -f '{{.Version}}' sigs.k8s.io/cluster-api)
minor=${version#v1.}
pkg=sigs.k8s.io/cluster-api/version
go -C "$root/test" build -trimpath -o "$out" -ldflags "-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 \
-X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean" sigs.k8s.io/cluster-api/cmd/clusterctl
echo "clusterctl $version: $out" >&2
