# Helpers of scripts/e2e-images.sh: progress lines, cache keys and stamps.

log() { echo "e2e-images: $*" >&2; }
die() { echo "e2e-images: error: $*" >&2; exit 1; }

# key prints a hash of its arguments and, for each argument that is an absolute path of a file
# or folder (not /), its content.
key() {
  local a
  for a in "$@"; do
    echo "$a"
    if [[ "$a" != /* || "$a" == / ]]; then
      continue
    elif [[ -d "$a" ]]; then
      find "$a" -type f -not -path '*/node_modules/*' -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
    elif [[ -f "$a" ]]; then
      sha256sum "$a"
    fi
  done | sha256sum | cut -c1-16
}

# fresh NAME KEY: whether the step NAME last completed with inputs KEY.
fresh() { [[ -f "$CACHE/stamps/$1" && "$(cat "$CACHE/stamps/$1")" == "$2" ]]; }
stamp() { mkdir -p "$CACHE/stamps"; echo "$2" > "$CACHE/stamps/$1"; }

# image_fresh IMAGE KEY: whether IMAGE exists and was built from inputs KEY (its capwin.e2e.key label).
image_fresh() {
  [[ "$(docker image inspect -f '{{index .Config.Labels "capwin.e2e.key"}}' "$1" 2>/dev/null)" == "$2" ]]
}

# timed NAME CMD...: runs CMD and logs how long it took.
timed() {
  local name=$1 t=$SECONDS
  shift
  "$@"
  log "$name: $((SECONDS - t)) s"
}
