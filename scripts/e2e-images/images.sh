# Images of scripts/e2e-images.sh: Debian root filesystems from debootstrap, a static non-root
# base, the Kubernetes, etcd, CoreDNS, pause, Cluster API, cert-manager and vcsim images from the
# binaries (the Cluster API Operator's too), and capwin's images from the root Dockerfile.

# The node's packages (kind's base image list, less network storage and rootless tooling).
NODE_PACKAGES=systemd,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,curl,jq,procps,gawk
# kube-proxy's and the Go build image's packages.
SLIM_PACKAGES=iptables,nftables,conntrack,ca-certificates

debian_mirror() {
  local m
  m=$(grep -rhE '^\s*(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d 2>/dev/null |
    grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -1 | tr -d ' ')
  echo "${m:-http://deb.debian.org/debian}"
}

# rootfs_tar NAME PACKAGES: $CACHE/rootfs/NAME.tar, a debootstrap minbase of $DEBIAN_SUITE.
rootfs_tar() {
  local name=$1 pkgs=$2 k dir
  k=$(key "$DEBIAN_SUITE" "$pkgs")
  if fresh "rootfs-$name" "$k" && [[ -f "$CACHE/rootfs/$name.tar" ]]; then return; fi
  log "debootstrap $DEBIAN_SUITE for $name ($pkgs)"
  dir=$CACHE/rootfs/$name
  rm -rf "$dir" && mkdir -p "$dir"
  debootstrap --variant=minbase --include="$pkgs" "$DEBIAN_SUITE" "$dir" "$(debian_mirror)" >"$CACHE/rootfs/$name.log" 2>&1 ||
    { tail -20 "$CACHE/rootfs/$name.log" >&2; die "debootstrap $name failed (log: $CACHE/rootfs/$name.log)"; }
  rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/var/log/*
  tar --numeric-owner -C "$dir" -cf "$CACHE/rootfs/$name.tar" .
  rm -rf "$dir"
  stamp "rootfs-$name" "$k"
}

# import_image IMAGE TAR KEY CHANGES...: docker import with a key label.
import_image() {
  local image=$1 tar=$2 k=$3
  shift 3
  if image_fresh "$image" "$k"; then return; fi
  log "importing $image"
  local changes=(--change "LABEL capwin.e2e.key=$k")
  local c
  for c in "$@"; do changes+=(--change "$c"); done
  docker import "${changes[@]}" "$tar" "$image" >/dev/null
}

# static_tar writes a distroless-like root: users root and nonroot (65532), CA certificates, /tmp.
static_tar() {
  local dir=$CACHE/rootfs/static
  rm -rf "$dir" && mkdir -p "$dir"/etc/ssl/certs "$dir"/tmp "$dir"/home/nonroot
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$dir/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$dir/etc/group"
  printf 'hosts: files dns\n' > "$dir/etc/nsswitch.conf"
  cp /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/"
  chmod 1777 "$dir/tmp"
  chown 65532:65532 "$dir/home/nonroot"
  tar --numeric-owner --sort=name --mtime=@0 -C "$dir" -cf "$CACHE/rootfs/static.tar" .
  rm -rf "$dir"
}

rootfs_images() {
  local t=$SECONDS
  rootfs_tar node "$NODE_PACKAGES"
  rootfs_tar slim "$SLIM_PACKAGES"
  static_tar
  local path='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
  import_image "$STATIC_IMAGE" "$CACHE/rootfs/static.tar" "$(key "$CACHE/rootfs/static.tar")" "$path" 'USER 65532:65532'
  import_image "$DEBIAN_IMAGE" "$CACHE/rootfs/slim.tar" "$(cat "$CACHE/stamps/rootfs-slim")" "$path"
  go_image
  log "root filesystems and base images: $((SECONDS - t)) s"
}

# go_image: the Dockerfile's GO_IMAGE, this host's Go toolchain and CA certificates on the slim Debian root.
go_image() {
  local k goroot ctx
  goroot=$(go env GOROOT)
  k=$(key "$DEBIAN_IMAGE" "$(docker image inspect -f '{{.Id}}' "$DEBIAN_IMAGE")" "$GO_VERSION" "$(go env GOPROXY)" /etc/ssl/certs/ca-certificates.crt)
  if image_fresh "$GO_IMAGE" "$k"; then return; fi
  log "building $GO_IMAGE from $goroot"
  ctx=$(mktemp -d)
  cp -a "$goroot" "$ctx/go"
  rm -rf "$ctx/go/pkg/tool/"*/{api,bisect,doc,fix} "$ctx/go/test" "$ctx/go/api"
  # The host's CA bundle: the module proxy is reached the way this host reaches it.
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
  cat > "$ctx/Dockerfile" <<EOF
FROM $DEBIAN_IMAGE
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY go /usr/local/go
ENV PATH=/usr/local/go/bin:/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOPATH=/go GOPROXY=$(go env GOPROXY) GOTOOLCHAIN=local
LABEL capwin.e2e.key=$k
EOF
  "${BUILD[@]}" -q -t "$GO_IMAGE" "$ctx" >/dev/null || die "building $GO_IMAGE failed"
  rm -rf "$ctx"
}

# binary_image IMAGE FROM USER ENTRYPOINT DEST FILE[:NAME]...: FILEs copied to DEST on FROM (as NAME).
binary_image() {
  local image=$1 from=$2 user=$3 entry=$4 dest=$5
  shift 5
  local k ctx f
  k=$(key "$image" "$from" "$(docker image inspect -f '{{.Id}}' "$from")" "$user" "$entry" "dest=$dest" "$@" "${@%%:*}")
  if image_fresh "$image" "$k"; then return; fi
  log "building $image"
  ctx=$(mktemp -d)
  mkdir -p "$ctx/files"
  for f in "$@"; do
    if [[ "$f" == *:* ]]; then cp "${f%%:*}" "$ctx/files/${f#*:}"; else cp "$f" "$ctx/files/"; fi
  done
  cat > "$ctx/Dockerfile" <<EOF
FROM $from
COPY files/ $dest
USER $user
ENTRYPOINT $entry
LABEL capwin.e2e.key=$k
EOF
  "${BUILD[@]}" -q -t "$image" "$ctx" >/dev/null || die "building $image failed"
  rm -rf "$ctx"
}

# Images kubeadm runs on the node, by the names kubeadm $K8S_VERSION asks for.
KUBE_IMAGES=(
  "registry.k8s.io/kube-apiserver:$K8S_VERSION"
  "registry.k8s.io/kube-controller-manager:$K8S_VERSION"
  "registry.k8s.io/kube-scheduler:$K8S_VERSION"
  "registry.k8s.io/kube-proxy:$K8S_VERSION"
  "registry.k8s.io/etcd:$ETCD_IMAGE_TAG"
  "registry.k8s.io/coredns/coredns:$COREDNS_VERSION"
  "registry.k8s.io/pause:$PAUSE_VERSION"
)

component_images() {
  local t=$SECONDS c
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    binary_image "registry.k8s.io/$c:$K8S_VERSION" "$STATIC_IMAGE" 0 "[\"/usr/local/bin/$c\"]" /usr/local/bin/ "$KUBE_BIN/$c"
  done
  binary_image "registry.k8s.io/kube-proxy:$K8S_VERSION" "$DEBIAN_IMAGE" 0 '["/usr/local/bin/kube-proxy"]' /usr/local/bin/ "$KUBE_BIN/kube-proxy"
  binary_image "registry.k8s.io/etcd:$ETCD_IMAGE_TAG" "$STATIC_IMAGE" 0 '["/usr/local/bin/etcd"]' /usr/local/bin/ "$BIN/etcd/etcd"
  binary_image "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" "$STATIC_IMAGE" 0 '["/coredns"]' / "$BIN/coredns/coredns"
  binary_image "registry.k8s.io/pause:$PAUSE_VERSION" "$STATIC_IMAGE" 65535:65535 '["/pause"]' / "$BIN/pause/pause"
  binary_image "${PREFIX}cluster-api-controller:$CAPI_VERSION" "$STATIC_IMAGE" 65532:65532 '["/manager"]' / "$BIN/cluster-api/core:manager"
  binary_image "${PREFIX}kubeadm-bootstrap-controller:$CAPI_VERSION" "$STATIC_IMAGE" 65532:65532 '["/manager"]' / "$BIN/cluster-api/bootstrap:manager"
  binary_image "${PREFIX}kubeadm-control-plane-controller:$CAPI_VERSION" "$STATIC_IMAGE" 65532:65532 '["/manager"]' / "$BIN/cluster-api/controlplane:manager"
  binary_image "${PREFIX}cluster-api-operator:$CAPI_OPERATOR_VERSION" "$STATIC_IMAGE" 65532:65532 '["/manager"]' / "$BIN/cluster-api-operator/manager"
  for c in "${CERT_MANAGER_IMAGES[@]}"; do
    binary_image "$PREFIX$c:$CERT_MANAGER_VERSION" "$STATIC_IMAGE" 65532:65532 "[\"/$c\"]" / "$CACHE/cert-manager/bin/$c"
  done
  binary_image "$VCSIM_IMAGE" "$STATIC_IMAGE" 65532:65532 '["/vcsim"]' / "$BIN/vcsim/vcsim"
  save_kube_images
  log "component images: $((SECONDS - t)) s"
}

# save_kube_images writes the node's preloaded images as docker-save archives.
save_kube_images() {
  local i f
  mkdir -p "$CACHE/images"
  for i in "${KUBE_IMAGES[@]}"; do
    f=$CACHE/images/$(echo "$i" | tr '/:' '__').tar
    if [[ -f "$f" && "$(cat "$f.id" 2>/dev/null)" == "$(docker image inspect -f '{{.Id}}' "$i")" ]]; then continue; fi
    docker save -o "$f" "$i"
    docker image inspect -f '{{.Id}}' "$i" > "$f.id"
  done
}

# capwin_images: the two managers and the e2e simulator from the root Dockerfile, with this
# machine's Go and static base images.
capwin_images() {
  local t=$SECONDS pair pkg name tags k
  k=$(key "$ROOT/Dockerfile" "$ROOT/go.mod" "$ROOT/go.sum" "$ROOT/api" "$ROOT/bootstrap" "$ROOT/infrastructure" "$ROOT/internal" "$ROOT/test" \
    "$(docker image inspect -f '{{.Id}}' "$GO_IMAGE" "$STATIC_IMAGE")")
  for pair in "./bootstrap:capwin-bootstrap-windows" "./infrastructure:capwin-infrastructure" "./test/e2e/kind/sim:capwin-e2e-sim"; do
    pkg=${pair%%:*} name=${pair#*:} tags=
    [[ "$name" == capwin-e2e-sim ]] && tags=e2e
    if image_fresh "$CAPWIN_REGISTRY/$name:$CAPWIN_TAG" "$k"; then continue; fi
    log "building $CAPWIN_REGISTRY/$name:$CAPWIN_TAG (root Dockerfile, GO_IMAGE=$GO_IMAGE BASE_IMAGE=$STATIC_IMAGE)"
    "${BUILD[@]}" --build-arg GO_IMAGE="$GO_IMAGE" --build-arg BASE_IMAGE="$STATIC_IMAGE" \
      --build-arg PACKAGE="$pkg" --build-arg TAGS="$tags" --label "capwin.e2e.key=$k" \
      -t "$CAPWIN_REGISTRY/$name:$CAPWIN_TAG" "$ROOT" >"$CACHE/build-$name.log" 2>&1 ||
      { tail -30 "$CACHE/build-$name.log" >&2; die "building $name failed (log: $CACHE/build-$name.log)"; }
  done
  log "capwin images: $((SECONDS - t)) s"
}
