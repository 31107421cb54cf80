# The kind node image of scripts/e2e-images.sh, laid out as kind $KIND_VERSION's node images are:
# a base (kind's images/base files from the sigs.k8s.io/kind module on a debootstrap root, with
# containerd, runc and CNI plugins from their modules), then kubelet, kubeadm and kubectl in
# /usr/bin, /kind/version, and the Kubernetes images imported into containerd's content store
# (ctr images import --no-unpack) in a build container that is committed, as `kind build
# node-image` does. kind's own builder cannot be used offline: it always pulls kindnetd and
# local-path-provisioner, whose modules are not served here.
#
# Differences from kind's images, each for this offline build:
#   - CNI: /kind/manifests/default-cni.yaml (which kind applies when the default CNI is on) holds
#     only a ConfigMap describing the bridge + host-local conflist baked into /etc/cni/net.d: one
#     node, pod subnet $POD_SUBNET (kind's default), routed by the node itself;
#   - storage: no manifest, so kind applies its built-in host-path StorageClass;
#   - runc: hack/runcwrap is the runc of the node's containerd (a no-op where the node's
#     capability bounding set is complete);
#   - cgroup v1 hosts: the kubelet gets --fail-cgroupv1=false (Kubernetes >= 1.35 refuses cgroup
#     v1 otherwise, and kind $KIND_VERSION does not set it).

POD_SUBNET=10.244.0.0/16
NODE_POD_RANGE=10.244.0.0/24

kind_files() {
  local dir
  dir=$(go mod download -json "sigs.k8s.io/kind@$KIND_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [[ -d "$dir/images/base/files" ]] || die "no images/base/files in sigs.k8s.io/kind@$KIND_VERSION"
  echo "$dir/images/base/files"
}

# node_overlay DIR: the files this image adds to or changes in kind's base files.
node_overlay() {
  local d=$1
  mkdir -p "$d/etc/cni/net.d" "$d/kind/manifests" "$d/etc/default"
  cat > "$d/etc/cni/net.d/10-capwin-bridge.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "capwin-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$NODE_POD_RANGE"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  cat > "$d/kind/manifests/default-cni.yaml" <<EOF
# capwin e2e node image: the pod network is the bridge + host-local conflist in
# /etc/cni/net.d/10-capwin-bridge.conflist of the node image (one node, pods in $NODE_POD_RANGE);
# kind applies this file in place of its kindnet manifest.
apiVersion: v1
kind: ConfigMap
metadata:
  name: capwin-e2e-cni
  namespace: kube-system
data:
  conflist: |
$(sed 's/^/    /' "$d/etc/cni/net.d/10-capwin-bridge.conflist")
EOF
  printf 'KUBELET_EXTRA_ARGS=--runtime-cgroups=/system.slice/containerd.service --fail-cgroupv1=false\n' > "$d/etc/default/kubelet"
  # kind's containerd config, with the pause image kubeadm $K8S_VERSION wants and runcwrap as runc.
  sed -e "s|sandbox_image = .*|sandbox_image = \"registry.k8s.io/pause:$PAUSE_VERSION\"|" \
    -e 's|^\(\s*\)SystemdCgroup = true|&\n\1BinaryName = "/usr/local/sbin/runcwrap"|' \
    "$KIND_FILES/etc/containerd/config.toml" > "$d/etc/containerd/config.toml"
}

base_image() {
  local k ctx
  KIND_FILES=$(kind_files)
  k=$(key "$CACHE/stamps/rootfs-node" "$KIND_FILES" "$BIN/containerd" "$BIN/runc" "$BIN/runcwrap/runcwrap" "$BIN/cni" \
    "$ROOT/scripts/e2e-images/node.sh" "$POD_SUBNET")
  if image_fresh "$BASE_IMAGE" "$k"; then return; fi
  log "building $BASE_IMAGE (kind $KIND_VERSION base files, containerd $CONTAINERD_VERSION, runc $RUNC_VERSION, CNI plugins $CNI_PLUGINS_VERSION)"
  import_image "${PREFIX}kind-rootfs:$DEBIAN_SUITE" "$CACHE/rootfs/node.tar" "$(cat "$CACHE/stamps/rootfs-node")"
  ctx=$(mktemp -d)
  cp -a "$KIND_FILES" "$ctx/files"
  chmod -R u+w "$ctx/files"
  node_overlay "$ctx/files"
  find "$ctx/files" -type d -exec chmod 0755 {} + && find "$ctx/files" -type f -exec chmod 0644 {} +
  chmod 0755 "$ctx/files/usr/local/bin/"* "$ctx/files/kind/bin/"*
  mkdir -p "$ctx/bin" "$ctx/sbin" "$ctx/cni"
  cp "$BIN/containerd/"* "$ctx/bin/"
  cp "$BIN/runc/runc" "$BIN/runcwrap/runcwrap" "$ctx/sbin/"
  cp "$BIN/cni/"* "$ctx/cni/"
  cat > "$ctx/Dockerfile" <<EOF
FROM ${PREFIX}kind-rootfs:$DEBIAN_SUITE
COPY files/ /
COPY bin/ /usr/local/bin/
COPY sbin/ /usr/local/sbin/
COPY cni/ /opt/cni/bin/
RUN find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete \\
 && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \\
          /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \\
          /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \\
 && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \\
 && ln -sf /usr/lib/systemd/systemd /sbin/init \\
 && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \\
 && systemctl mask systemd-binfmt.service \\
 && mkdir -p /etc/kubernetes/manifests \\
 && ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \\
      | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json \\
 && containerd --version && runc --version
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
LABEL capwin.e2e.key=$k
EOF
  "${BUILD[@]}" -t "$BASE_IMAGE" "$ctx" >"$CACHE/build-kind-base.log" 2>&1 ||
    { tail -30 "$CACHE/build-kind-base.log" >&2; die "building $BASE_IMAGE failed (log: $CACHE/build-kind-base.log)"; }
  rm -rf "$ctx"
}

node_image() {
  local t=$SECONDS k id i f want
  base_image
  local tars=()
  for i in "${KUBE_IMAGES[@]}"; do tars+=("$CACHE/images/$(echo "$i" | tr '/:' '__').tar"); done
  k=$(key "$(docker image inspect -f '{{.Id}}' "$BASE_IMAGE")" "$KUBE_BIN/kubelet" "$KUBE_BIN/kubeadm" "$KUBE_BIN/kubectl" "${tars[@]/%/.id}")
  if image_fresh "$NODE_IMAGE" "$k"; then return; fi
  log "building $NODE_IMAGE"
  id=$(docker run -d --entrypoint=sleep --security-opt seccomp=unconfined "$BASE_IMAGE" infinity)
  # shellcheck disable=SC2064
  trap "docker rm -f -v $id >/dev/null 2>&1 || true" EXIT
  for f in kubelet kubeadm kubectl; do
    docker cp "$KUBE_BIN/$f" "$id:/usr/bin/$f"
    docker exec "$id" chown root:root "/usr/bin/$f"
  done
  docker exec "$id" bash -c "echo $K8S_VERSION > /kind/version"
  # The images kubeadm asks for must be exactly the ones preloaded.
  want=$(docker exec "$id" kubeadm config images list --kubernetes-version "$K8S_VERSION" | sort)
  [[ "$want" == "$(printf '%s\n' "${KUBE_IMAGES[@]}" | sort)" ]] ||
    die "kubeadm $K8S_VERSION asks for other images than this script builds:"$'\n'"$want"
  docker exec "$id" bash -c 'nohup containerd >/dev/null 2>&1 &'
  docker exec "$id" bash -c 'for i in $(seq 1 30); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && exit 0; sleep 1; done; exit 1' ||
    die "containerd did not start in the node image build container"
  for f in "${tars[@]}"; do
    docker exec -i "$id" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
      --all-platforms --no-unpack --digests - < "$f" >/dev/null || die "importing $f into the node image failed"
  done
  docker exec "$id" pkill containerd || true
  sleep 1
  docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
    --change "LABEL capwin.e2e.key=$k" "$id" "$NODE_IMAGE" >/dev/null
  docker rm -f -v "$id" >/dev/null
  trap - EXIT
  log "node image: $((SECONDS - t)) s"
}
