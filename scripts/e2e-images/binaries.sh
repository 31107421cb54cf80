# Binaries of scripts/e2e-images.sh, built on the host from Go modules (the Go module proxy) into
# $CACHE/bin, each in a module of its own so that it gets the dependency versions its release has.

BIN=$CACHE/bin

# go_module_build NAME MODULE@VERSION LDFLAGS CGO PACKAGE[:OUT]...: builds each PACKAGE (a main
# package of MODULE, or "." for $CACHE/src/NAME/main.go) into $BIN/NAME/OUT (default: its base name).
go_module_build() {
  local name=$1 modver=$2 ld=$3 cgo=$4
  shift 4
  local k
  k=$(key "$modver" "$ld" "$cgo" "$*" "$GO_VERSION" "$CACHE/src/$name/main.go")
  if fresh "bin-$name" "$k"; then return; fi
  log "building $name ($modver)"
  local src=$CACHE/src/$name
  mkdir -p "$src" "$BIN/$name"
  (
    cd "$src"
    rm -f go.mod go.sum
    printf 'module capwin.local/e2e/%s\n\ngo 1.26\n' "$name" > go.mod
    # shellcheck disable=SC2086 # MODULE@VERSION may be several, space-separated
    GOFLAGS=-mod=mod go get $modver >/dev/null 2>&1 || GOFLAGS=-mod=mod go get $modver
    if [[ -f main.go ]]; then GOFLAGS=-mod=mod go mod tidy >/dev/null; fi
    local p out
    for p in "$@"; do
      out=$BIN/$name/$(basename "${p%%:*}")
      [[ "$p" == *:* ]] && out=$BIN/$name/${p#*:}
      [[ "$p" == . ]] && out=$BIN/$name/$name
      p=${p%%:*}
      CGO_ENABLED=$cgo GOFLAGS=-mod=mod go build -trimpath -tags "${BUILD_TAGS:-}" -ldflags "$ld" -o "$out.tmp" "$p"
      mv "$out.tmp" "$out"
    done
  ) || die "building $name failed"
  stamp "bin-$name" "$k"
}

build_binaries() {
  local t=$SECONDS
  log "Kubernetes $K8S_VERSION: kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubeadm, kubectl, kube-proxy (scripts/envtest-assets.sh)"
  KUBE_BIN=$("$ROOT/scripts/envtest-assets.sh" --workload --node)

  # etcd has no importable main package; its server's etcdmain is what the etcd binary runs.
  mkdir -p "$CACHE/src/etcd"
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' > "$CACHE/src/etcd/main.go"
  go_module_build etcd "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "-s -w" 0 .
  go_module_build coredns "github.com/coredns/coredns@$COREDNS_VERSION" \
    "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" 0 github.com/coredns/coredns
  BUILD_TAGS="no_btrfs no_devmapper no_zfs" go_module_build containerd "github.com/containerd/containerd/v2@$CONTAINERD_VERSION" \
    "-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" 0 \
    github.com/containerd/containerd/v2/cmd/containerd \
    github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    github.com/containerd/containerd/v2/cmd/ctr
  # runc needs cgo for libseccomp (linked dynamically; the node's Debian has libseccomp2).
  BUILD_TAGS="seccomp urfave_cli_no_docs" go_module_build runc "github.com/opencontainers/runc@$RUNC_VERSION" \
    "-s -w -X main.version=${RUNC_VERSION#v}" 1 github.com/opencontainers/runc
  go_module_build cni "github.com/containernetworking/plugins@$CNI_PLUGINS_VERSION" \
    "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" 0 \
    github.com/containernetworking/plugins/plugins/main/bridge \
    github.com/containernetworking/plugins/plugins/main/loopback \
    github.com/containernetworking/plugins/plugins/main/ptp \
    github.com/containernetworking/plugins/plugins/ipam/host-local \
    github.com/containernetworking/plugins/plugins/meta/portmap
  local minor=${CAPI_VERSION#v1.}
  local capild="-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$CAPI_VERSION -X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=${minor%%.*}"
  # Cluster API's go.mod replaces its api module with ./api; a consumer pins it to the same version.
  go_module_build cluster-api "sigs.k8s.io/cluster-api@$CAPI_VERSION sigs.k8s.io/cluster-api/api@$CAPI_VERSION" "$capild" 0 \
    sigs.k8s.io/cluster-api/core sigs.k8s.io/cluster-api/bootstrap/kubeadm:bootstrap sigs.k8s.io/cluster-api/controlplane/kubeadm:controlplane
  go_module_build cluster-api-operator "sigs.k8s.io/cluster-api-operator@$CAPI_OPERATOR_VERSION" \
    "-s -w -X sigs.k8s.io/cluster-api-operator/version.gitVersion=$CAPI_OPERATOR_VERSION" 0 sigs.k8s.io/cluster-api-operator/cmd:manager
  build_own vcsim ./e2e/kind/vcsim test e2e
  build_pause
  build_own runcwrap ./hack/runcwrap
  build_cert_manager
  log "binaries: $((SECONDS - t)) s"
}

# build_pause compiles Kubernetes' pause (build/pause/linux/pause.c of the k8s.io/kubernetes module).
build_pause() {
  local dir src k
  dir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  src=$dir/build/pause/linux/pause.c
  [[ -f "$src" ]] || die "no $src in the k8s.io/kubernetes module"
  k=$(key "$src" "$PAUSE_VERSION")
  if fresh bin-pause "$k"; then return; fi
  log "building pause $PAUSE_VERSION"
  mkdir -p "$BIN/pause"
  gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-capwin" -o "$BIN/pause/pause" "$src" || die "building pause failed"
  strip "$BIN/pause/pause"
  stamp bin-pause "$k"
}

# build_own NAME PACKAGE: a command of this repository (capwin's go.mod) into $BIN/NAME/NAME.
# build_own NAME PACKAGE [MODULE_DIR [TAGS]] builds one of capwin's own programs (MODULE_DIR: the
# module's folder in the repository, default its root).
build_own() {
  mkdir -p "$BIN/$1"
  (cd "$ROOT/${3:-.}" && CGO_ENABLED=0 go build -trimpath -tags "${4:-}" -ldflags "-s -w" -o "$BIN/$1/$1" "$2") ||
    die "building $2 failed"
}

build_cert_manager() {
  local k
  k=$(key "$ROOT/hack/e2e/certmanager" "$PREFIX" "$CERT_MANAGER_VERSION")
  if fresh cert-manager "$k" && [[ -f "$CACHE/cert-manager/cert-manager.yaml" ]]; then return; fi
  log "building cert-manager $CERT_MANAGER_VERSION (hack/e2e/certmanager)"
  "$ROOT/hack/e2e/certmanager/build.sh" "$CACHE/cert-manager" "$PREFIX" || die "building cert-manager failed"
  stamp cert-manager "$k"
}
