#!/usr/bin/env bash
# Builds, without pulling anything, every image and manifest the kind e2e (test/e2e/kind) needs:
#
#   - a kind node image for Kubernetes $K8S_VERSION (base from debootstrap with systemd;
#     containerd, runc and the CNI plugins from their Go modules; kubelet, kubeadm, kubectl and the
#     control-plane, etcd, CoreDNS, pause and kube-proxy images from source, preloaded into the
#     node's containerd as kind's own node images are);
#   - cert-manager (controller, webhook, cainjector) from its Go module, and its manifest;
#   - Cluster API core, kubeadm bootstrap and kubeadm control plane images from the module, and
#     their components YAML from the module's config/ with kustomize; the Cluster API Operator's
#     image and manifest the same way;
#   - vcsim from govmomi; capwin's two managers and the e2e simulator from the root Dockerfile.
#
# Everything is cached under ~/.cache/capwin/e2e: a step runs again only when its inputs
# (versions, this script, the sources it builds) changed. Where `docker info` fails and apt
# works, Docker is installed and started; where this machine's capability bounding set lacks
# capabilities that privileged containers ask for, dockerd runs with hack/runcwrap.
#
#   scripts/e2e-images.sh            build what is missing or stale
#   scripts/e2e-images.sh --list     print the images the suite uses, one per line
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CAPWIN_CACHE:-$HOME/.cache/capwin}/e2e
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false"

K8S_VERSION=v1.36.3
# What kubeadm $K8S_VERSION asks for (kubeadm config images list).
ETCD_VERSION=v3.6.8
ETCD_IMAGE_TAG=3.6.8-0
COREDNS_VERSION=v1.14.2
PAUSE_VERSION=3.10.2
CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.3.3
CNI_PLUGINS_VERSION=v1.8.0
CAPI_VERSION=v1.14.2
CAPI_OPERATOR_VERSION=v0.29.0
GOVMOMI_VERSION=v0.56.0
CERT_MANAGER_VERSION=v1.21.2
KIND_VERSION=v0.33.0
# The release the provider upgrade spec starts from (scripts/e2e-images/previous.sh).
PREVIOUS_VERSION=v0.1.0
PREVIOUS_REGISTRY=e2e.capwin.local/previous
DEBIAN_SUITE=bookworm
GO_VERSION=$(go env GOVERSION | sed 's/^go//')

# Images this machine builds for the suite; names fixed by kubeadm keep their registry.k8s.io names.
PREFIX=e2e.capwin.local/
CAPWIN_REGISTRY=${CAPWIN_IMAGE_REGISTRY:-ghcr.io/capwin}
CAPWIN_TAG=${CAPWIN_IMAGE_TAG:-dev}
NODE_IMAGE=${PREFIX}kind-node:$K8S_VERSION
BASE_IMAGE=${PREFIX}kind-base:$DEBIAN_SUITE
STATIC_IMAGE=${PREFIX}static:nonroot
DEBIAN_IMAGE=${PREFIX}debian-iptables:$DEBIAN_SUITE
GO_IMAGE=${PREFIX}golang:$GO_VERSION
VCSIM_IMAGE=${PREFIX}vcsim:$GOVMOMI_VERSION
CAPI_IMAGES=(cluster-api-controller kubeadm-bootstrap-controller kubeadm-control-plane-controller)
CERT_MANAGER_IMAGES=(cert-manager-controller cert-manager-webhook cert-manager-cainjector)
CAPWIN_IMAGES=(capwin-bootstrap-windows capwin-infrastructure capwin-e2e-sim)

# The images loaded into the kind node by the suite (test/e2e/config/capwin.yaml lists the same).
suite_images() {
  local i
  for i in "${CAPWIN_IMAGES[@]}"; do echo "$CAPWIN_REGISTRY/$i:$CAPWIN_TAG"; done
  for i in capwin-bootstrap-windows capwin-infrastructure; do echo "$PREVIOUS_REGISTRY/$i:$PREVIOUS_VERSION"; done
  for i in "${CAPI_IMAGES[@]}"; do echo "$PREFIX$i:$CAPI_VERSION"; done
  echo "${PREFIX}cluster-api-operator:$CAPI_OPERATOR_VERSION"
  for i in "${CERT_MANAGER_IMAGES[@]}"; do echo "$PREFIX$i:$CERT_MANAGER_VERSION"; done
  echo "$VCSIM_IMAGE"
}

case "${1:-}" in
  --list) echo "$NODE_IMAGE"; suite_images; exit 0 ;;
  "") ;;
  *) echo "e2e-images: unknown argument $1 (use --list)" >&2; exit 2 ;;
esac

# shellcheck source=scripts/e2e-images/lib.sh
source "$ROOT/scripts/e2e-images/lib.sh"
# shellcheck source=scripts/e2e-images/host.sh
source "$ROOT/scripts/e2e-images/host.sh"
# shellcheck source=scripts/e2e-images/binaries.sh
source "$ROOT/scripts/e2e-images/binaries.sh"
# shellcheck source=scripts/e2e-images/images.sh
source "$ROOT/scripts/e2e-images/images.sh"
# shellcheck source=scripts/e2e-images/node.sh
source "$ROOT/scripts/e2e-images/node.sh"
# shellcheck source=scripts/e2e-images/manifests.sh
source "$ROOT/scripts/e2e-images/manifests.sh"
# shellcheck source=scripts/e2e-images/previous.sh
source "$ROOT/scripts/e2e-images/previous.sh"

start=$SECONDS
mkdir -p "$CACHE"
host_prerequisites
rootfs_images
build_binaries
component_images
capwin_images
previous_release
node_image
write_manifests
log "done in $((SECONDS - start)) s; images:"
for i in "$NODE_IMAGE" $(suite_images); do
  printf '  %-70s %s\n' "$i" "$(docker image inspect -f '{{.Size}}' "$i" | awk '{printf "%.0f MB", $1/1e6}')" >&2
done
