# Host prerequisites of scripts/e2e-images.sh: tools, Debian packages, a running Docker engine.

APT_UPDATED=false
apt_install() {
  command -v apt-get >/dev/null || die "missing $*: install them (no apt-get here to do it)"
  [[ $(id -u) == 0 ]] || die "missing $*: install them, or run this as root so that apt-get can"
  if ! $APT_UPDATED; then
    log "apt-get update"
    apt-get update -q >/dev/null || die "apt-get update failed: Debian's package mirror must be reachable"
    APT_UPDATED=true
  fi
  log "installing Debian packages: $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
    die "apt-get install $* failed"
}

host_prerequisites() {
  local c
  for c in go gcc git make; do
    command -v "$c" >/dev/null || die "$c is required (a machine for this project has Go, gcc, git and make)"
  done
  local pkgs=()
  command -v debootstrap >/dev/null || pkgs+=(debootstrap)
  command -v pkg-config >/dev/null || pkgs+=(pkg-config)
  [[ -f /usr/include/seccomp.h ]] || pkgs+=(libseccomp-dev)
  [[ -f /usr/lib/x86_64-linux-gnu/libc.a || -f /usr/lib/aarch64-linux-gnu/libc.a ]] || pkgs+=(libc6-dev)
  docker_engine_present || pkgs+=(docker.io)
  [[ ${#pkgs[@]} -eq 0 ]] || apt_install "${pkgs[@]}"
  start_docker
  pick_docker_builder
}

docker_engine_present() { command -v dockerd >/dev/null || docker info >/dev/null 2>&1; }

# missing_caps prints the capabilities (numbers) the kernel has that this process's bounding set lacks.
missing_caps() {
  local bnd last i
  bnd=$((16#$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
  last=$(cat /proc/sys/kernel/cap_last_cap)
  for ((i = 0; i <= last; i++)); do
    (( (bnd >> i) & 1 )) || echo "$i"
  done
}

# start_docker starts dockerd where `docker info` fails. Where the bounding set lacks a capability
# (CAP_SYS_RESOURCE on the machines this was written on), `docker run --privileged` fails with
# "unable to apply caps"; dockerd then gets hack/runcwrap as its default runtime, which drops
# exactly the missing capabilities before it runs runc. On an ordinary host nothing changes.
start_docker() {
  if docker info >/dev/null 2>&1; then
    if [[ -n "$(missing_caps)" ]] && ! docker info 2>/dev/null | grep -q 'Default Runtime: capwin-runc'; then
      log "warning: this host's capability bounding set lacks capabilities ($(missing_caps | tr '\n' ' ')) and the running dockerd does not use hack/runcwrap; kind's privileged nodes may fail to start"
    fi
    return
  fi
  command -v dockerd >/dev/null || die "no Docker engine: docker info fails and dockerd is not installed"
  local args=() wrap="$CACHE/bin/runcwrap/runcwrap"
  if [[ -n "$(missing_caps)" ]]; then
    log "the capability bounding set lacks capabilities $(missing_caps | tr '\n' ' '): dockerd will run containers through hack/runcwrap"
    mkdir -p "$(dirname "$wrap")"
    (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$wrap" ./hack/runcwrap) || die "building hack/runcwrap failed"
    args+=(--add-runtime "capwin-runc=$wrap" --default-runtime capwin-runc)
  fi
  log "starting dockerd (log: $CACHE/dockerd.log)"
  nohup dockerd "${args[@]}" >"$CACHE/dockerd.log" 2>&1 &
  local i
  for ((i = 0; i < 60; i++)); do
    docker info >/dev/null 2>&1 && return
    sleep 1
  done
  tail -20 "$CACHE/dockerd.log" >&2
  die "dockerd did not come up in 60 s (log above)"
}

# pick_docker_builder sets BUILD to a command that builds a Dockerfile with BuildKit (the root
# Dockerfile uses RUN --mount): `docker buildx build --load` where buildx is installed, else a
# Docker client that still has BuildKit built in (Debian's docker.io 20.10 at /usr/bin/docker).
pick_docker_builder() {
  if docker buildx version >/dev/null 2>&1; then
    BUILD=(docker buildx build --load)
    return
  fi
  local c
  for c in docker /usr/bin/docker; do
    if [[ -x "$(command -v "$c")" ]] && "$c" version -f '{{.Client.Version}}' 2>/dev/null | grep -qE '^(19|20|21|22)\.'; then
      BUILD=(env DOCKER_BUILDKIT=1 "$c" build)
      return
    fi
  done
  die "no way to build with BuildKit: install docker buildx, or Debian's docker.io (its client has BuildKit built in)"
}
