#!/usr/bin/env bash
# make test-e2e-release, after `make release VERSION=$2 REGISTRY=$1`: loads the linux/amd64
# images of the release archives (out/*.oci.tar) into the local Docker engine under their stamped
# names (this engine cannot load OCI archives itself), and writes test/e2e/config/capwin-release.yaml:
# the kind e2e's config with capwin's managers named as the release names them.
set -euo pipefail
registry=$1 version=$2
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go -C hack/images run . docker-archive -out "$PWD/out" -dest "$tmp" -platform linux/amd64 >"$tmp/list"
while read -r archive; do
  docker load -q -i "$archive"
done <"$tmp/list"
for image in capwin-infrastructure capwin-bootstrap-windows; do
  docker image inspect "$registry/$image:$version" >/dev/null
done
sed -e "s|ghcr.io/capwin/capwin-infrastructure|$registry/capwin-infrastructure|g" \
    -e "s|ghcr.io/capwin/capwin-bootstrap-windows|$registry/capwin-bootstrap-windows|g" \
    -e "s|capwin-infrastructure:dev|capwin-infrastructure:$version|g" \
    -e "s|capwin-bootstrap-windows:dev|capwin-bootstrap-windows:$version|g" \
    test/e2e/config/capwin.yaml >test/e2e/config/capwin-release.yaml
echo "test/e2e/config/capwin-release.yaml: capwin's managers from $registry, tag $version"
