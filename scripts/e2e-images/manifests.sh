# Manifests of scripts/e2e-images.sh: Cluster API's components and the Cluster API Operator's
# (kustomize of the modules' config/, hack/e2e/capicomponents) and cert-manager's (hack/e2e/certmanager), with the images built here.
# They are written to $CACHE/manifests and copied to _e2e/manifests in the repository, where
# test/e2e/config/capwin.yaml finds them.

write_manifests() {
  local k capi operator out=$CACHE/manifests
  capi=$(go mod download -json "sigs.k8s.io/cluster-api@$CAPI_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  operator=$(go mod download -json "sigs.k8s.io/cluster-api-operator@$CAPI_OPERATOR_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  k=$(key "$capi/metadata.yaml" "$operator/config" "$ROOT/hack/e2e/capicomponents" "$ROOT/internal/release/kustomize.go" "$PREFIX" "$CACHE/cert-manager/cert-manager.yaml")
  if ! fresh manifests "$k" || [[ ! -d "$out" ]]; then
    log "writing Cluster API $CAPI_VERSION and Cluster API Operator $CAPI_OPERATOR_VERSION components (kustomize of the modules' config/) and cert-manager's manifest"
    rm -rf "$out"
    (cd "$ROOT" && go run ./hack/e2e/capicomponents -module-dir "$capi" -version "$CAPI_VERSION" -image-prefix "$PREFIX" -out "$out" \
      -operator-module-dir "$operator" -operator-version "$CAPI_OPERATOR_VERSION") ||
      die "writing Cluster API's components failed"
    mkdir -p "$out/cert-manager/$CERT_MANAGER_VERSION"
    cp "$CACHE/cert-manager/cert-manager.yaml" "$out/cert-manager/$CERT_MANAGER_VERSION/cert-manager.yaml"
    stamp manifests "$k"
  fi
  rm -rf "$ROOT/_e2e/manifests" && mkdir -p "$ROOT/_e2e" && cp -r "$out" "$ROOT/_e2e/manifests"
}
