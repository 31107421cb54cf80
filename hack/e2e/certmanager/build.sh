#!/usr/bin/env bash
# Builds cert-manager v1.21.2 for capwin's kind e2e tests without any container
# registry: three static binaries from the github.com/cert-manager/cert-manager
# Go module (mains in this directory's nested module), plus cert-manager.yaml
# rendered from the Helm chart shipped in that module.
#
#   hack/e2e/certmanager/build.sh [--manifest-only] OUTDIR IMAGE_PREFIX
#
# (--manifest-only: only OUTDIR/cert-manager.yaml; make release-offline builds the images itself.)
#
# writes
#   OUTDIR/bin/cert-manager-controller
#   OUTDIR/bin/cert-manager-webhook
#   OUTDIR/bin/cert-manager-cainjector
#   OUTDIR/cert-manager.yaml
#
# Image contract (what the manifest expects of the images you build):
#   ${IMAGE_PREFIX}cert-manager-controller:v1.21.2  contains /cert-manager-controller
#   ${IMAGE_PREFIX}cert-manager-webhook:v1.21.2     contains /cert-manager-webhook
#   ${IMAGE_PREFIX}cert-manager-cainjector:v1.21.2  contains /cert-manager-cainjector
# e.g.  FROM <static distroless-like base>
#       COPY cert-manager-controller /cert-manager-controller
#       USER 65532:65532
#       ENTRYPOINT ["/cert-manager-controller"]
# The manifest sets `command: ["/cert-manager-<name>"]` on every container, so
# the image's ENTRYPOINT is not relied upon (but the path is). The pods run
# with runAsNonRoot: true and no runAsUser, so the image must declare a
# NUMERIC non-root USER (65532). The root filesystem is read-only; the
# binaries need no writable paths, no CA bundle, no shell and no libc
# (CGO_ENABLED=0). imagePullPolicy is IfNotPresent: load the images into the
# kind nodes (kind load / ctr import) before applying the manifest.
# The ACME HTTP-01 solver image referenced by the controller's
# --acme-http01-solver-image (${IMAGE_PREFIX}cert-manager-acmesolver:v1.21.2)
# is NOT built; it is only pulled if an ACME issuer is used.
#
# Idempotent: a second run with nothing changed relinks nothing and leaves
# cert-manager.yaml untouched (a few seconds).
set -euo pipefail

VERSION=v1.21.2
log() { echo "cert-manager: $*" >&2; }
die() { echo "cert-manager: ERROR: $*" >&2; exit 1; }

manifest_only=false
if [[ ${1:-} == --manifest-only ]]; then manifest_only=true; shift; fi
[[ $# -eq 2 ]] || die "usage: $0 [--manifest-only] OUTDIR IMAGE_PREFIX   (e.g. $0 _out/e2e e2e.capwin.local/)"
OUTDIR=$1
PREFIX=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HELMRENDER=$(cd "$HERE/../helmrender" && pwd)

command -v go >/dev/null || die "go not found in PATH"
export GOTOOLCHAIN=local CGO_ENABLED=0
if $manifest_only; then mkdir -p "$OUTDIR"; else mkdir -p "$OUTDIR/bin"; fi || die "cannot create $OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
trap 'rc=$?; [[ $rc -eq 0 ]] || echo "cert-manager: ERROR: build failed (exit $rc)" >&2' EXIT

# install_if_changed SRC DST: replace DST only when the content differs, so
# that an unchanged manifest keeps its mtime.
install_if_changed() {
  if [[ -f $2 ]] && cmp -s "$1" "$2"; then
    rm -f "$1"
  else
    mv -f "$1" "$2"
  fi
}

cd "$HERE"
ldflags="-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$VERSION"
for name in controller webhook cainjector; do
  $manifest_only && break
  log "building $name"
  bin="$OUTDIR/bin/cert-manager-$name"
  # go build skips the link when $bin is already up to date (build ID check).
  go build -trimpath -ldflags "$ldflags" -o "$bin" "./cmd/cert-manager-$name" \
    || die "go build of cert-manager-$name failed"
done

log "locating the cert-manager $VERSION chart"
go mod download github.com/cert-manager/cert-manager || die "cannot download github.com/cert-manager/cert-manager $VERSION"
CM_DIR=$(go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
[[ -n $CM_DIR && -d $CM_DIR/deploy/charts/cert-manager ]] || die "chart not found in the module (dir: '$CM_DIR')"
CM_VERSION=$(go list -m -f '{{.Version}}' github.com/cert-manager/cert-manager)
[[ $CM_VERSION == "$VERSION" ]] || die "go.mod resolves cert-manager $CM_VERSION, expected $VERSION"

log "rendering cert-manager.yaml (images ${PREFIX}cert-manager-*:$VERSION)"
(
  cd "$HELMRENDER"
  # Same choices as upstream's static manifest (make/manifests.mk): namespace
  # first, CRDs included, creator=static, no startupapicheck job.
  go run . \
    -chart "$CM_DIR/deploy/charts/cert-manager" \
    -name cert-manager -namespace cert-manager -version "$VERSION" -kube-version 1.29.0 \
    -prepend "$CM_DIR/deploy/manifests/namespace.yaml" \
    -set crds.enabled=true -set creator=static -set startupapicheck.enabled=false \
    -set "image.repository=${PREFIX}cert-manager-controller,image.tag=$VERSION,image.pullPolicy=IfNotPresent" \
    -set "webhook.image.repository=${PREFIX}cert-manager-webhook,webhook.image.tag=$VERSION,webhook.image.pullPolicy=IfNotPresent" \
    -set "cainjector.image.repository=${PREFIX}cert-manager-cainjector,cainjector.image.tag=$VERSION,cainjector.image.pullPolicy=IfNotPresent" \
    -set "acmesolver.image.repository=${PREFIX}cert-manager-acmesolver,acmesolver.image.tag=$VERSION" \
    -command cert-manager-controller=/cert-manager-controller \
    -command cert-manager-webhook=/cert-manager-webhook \
    -command cert-manager-cainjector=/cert-manager-cainjector \
    -o "$OUTDIR/cert-manager.yaml.new"
) || die "rendering the chart failed"
install_if_changed "$OUTDIR/cert-manager.yaml.new" "$OUTDIR/cert-manager.yaml"

for name in controller webhook cainjector; do
  grep -q "image: \"${PREFIX}cert-manager-$name:$VERSION\"" "$OUTDIR/cert-manager.yaml" \
    || die "rendered manifest lacks image ${PREFIX}cert-manager-$name:$VERSION"
done
if $manifest_only; then log "done: $OUTDIR/cert-manager.yaml"; exit 0; fi
log "done: $OUTDIR/bin/cert-manager-{controller,webhook,cainjector} $OUTDIR/cert-manager.yaml"
