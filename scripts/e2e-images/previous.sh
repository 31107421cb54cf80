# The previous release of scripts/e2e-images.sh, for the kind e2e's provider upgrade spec:
# capwin $PREVIOUS_VERSION as the first commit with `make release` ($PREVIOUS_COMMIT) built it,
# from that commit's own sources and Dockerfile: its two managers' images
# ($PREVIOUS_REGISTRY/<image>:$PREVIOUS_VERSION, a registry of their own so that nothing that
# renames the current images touches them)
# its release files (components, metadata.yaml, cluster templates) and its Hyper-V scripts
# (hyperv-ps/, which the simulated hosts run beside this tree's), written to
# $CACHE/previous/$PREVIOUS_VERSION and copied to _e2e/previous/$PREVIOUS_VERSION in the
# repository, where test/e2e/config/capwin.yaml finds them. The commit never changes, so it is
# built once per machine; it needs the repository's history (a full clone).

PREVIOUS_COMMIT=5622e6d75db84ecf2b8ce59692cebe9221b9c942
PREVIOUS_IMAGES=(capwin-bootstrap-windows capwin-infrastructure)

previous_release() {
  local t=$SECONDS out=$CACHE/previous/$PREVIOUS_VERSION src name pkg k
  k=$(key "$PREVIOUS_COMMIT" "$(docker image inspect -f '{{.Id}}' "$GO_IMAGE" "$STATIC_IMAGE")")
  if ! fresh previous "$k" || [[ ! -f "$out/metadata.yaml" ]] || [[ ! -d "$out/hyperv-ps" ]] ||
    ! image_fresh "$PREVIOUS_REGISTRY/capwin-infrastructure:$PREVIOUS_VERSION" "$k" ||
    ! image_fresh "$PREVIOUS_REGISTRY/capwin-bootstrap-windows:$PREVIOUS_VERSION" "$k"; then
    git -C "$ROOT" cat-file -e "$PREVIOUS_COMMIT^{commit}" 2>/dev/null ||
      die "commit $PREVIOUS_COMMIT ($PREVIOUS_VERSION) is not in this clone's history; fetch it (git fetch --unshallow)"
    log "building capwin $PREVIOUS_VERSION from $PREVIOUS_COMMIT (its Dockerfile and release files)"
    src=$(mktemp -d)
    git -C "$ROOT" archive "$PREVIOUS_COMMIT" | tar -x -C "$src"
    for name in "${PREVIOUS_IMAGES[@]}"; do
      pkg=./infrastructure
      [[ "$name" == capwin-bootstrap-windows ]] && pkg=./bootstrap
      "${BUILD[@]}" --build-arg GO_IMAGE="$GO_IMAGE" --build-arg BASE_IMAGE="$STATIC_IMAGE" \
        --build-arg PACKAGE="$pkg" --label "capwin.e2e.key=$k" \
        -t "$PREVIOUS_REGISTRY/$name:$PREVIOUS_VERSION" "$src" >"$CACHE/build-$name-$PREVIOUS_VERSION.log" 2>&1 ||
        { tail -30 "$CACHE/build-$name-$PREVIOUS_VERSION.log" >&2; rm -rf "$src"; die "building $name $PREVIOUS_VERSION failed"; }
    done
    rm -rf "$out" && mkdir -p "$out"
    (cd "$src" && go run ./hack/release -out "$out" -registry "$PREVIOUS_REGISTRY" -version "$PREVIOUS_VERSION") ||
      { rm -rf "$src"; die "writing the $PREVIOUS_VERSION release files failed"; }
    # The host scripts: infrastructure/pkg/hyperv/wire/ps, or pkg/hyperv/ps in releases before the wire package.
    ps=$src/infrastructure/pkg/hyperv/wire/ps
    [[ -d "$ps" ]] || ps=$src/infrastructure/pkg/hyperv/ps
    mkdir -p "$out/hyperv-ps" && cp "$ps"/*.ps1 "$out/hyperv-ps/"
    rm -rf "$src"
    stamp previous "$k"
    log "capwin $PREVIOUS_VERSION: $((SECONDS - t)) s"
  fi
  rm -rf "$ROOT/_e2e/previous" && mkdir -p "$ROOT/_e2e/previous" && cp -r "$out" "$ROOT/_e2e/previous/$PREVIOUS_VERSION"
}
