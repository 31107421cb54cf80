#!/usr/bin/env bash
# make test: every test of the repository, then the total time and the ten slowest packages.
#
#   1. a compile and vet check of the kind e2e (build tag e2e; it needs Docker to run);
#   2. the test module's tests (test/go.mod: the integration suites on envtest, vcsim, simulated
#      Hyper-V hosts and guests, clusterctl; the frameworks' own tests; the e2e on the harness),
#      then the main module's (unit, envtest, PowerShell parse checks), then the kind e2e's guest
#      simulator tests;
#   3. the release image builder's tests (nested module hack/images).
#
# Every step runs even when one before it failed; the exit status is 1 when any failed. The whole
# output goes to out/test.log too. TEST_ARGS adds flags to every `go test` (-run, -v, ...).
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
mkdir -p out
log=out/test.log
: >"$log"
begin=$(date +%s)
failed=()

step() {
  local name=$1
  shift
  local line="$*"
  ((${#line} <= 200)) || line="${line:0:200} ... (${#pkgs[@]} packages)"
  echo "== $name: $line" | tee -a "$log"
  "$@" 2>&1 | tee -a "$log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=("$name")
}

assets=$(scripts/envtest-assets.sh) || exit 1
export KUBEBUILDER_ASSETS=$assets
# Most tests wait on controllers, simulators and timers rather than compute: run more packages
# (-p) and more of a package's parallel tests (-parallel) at once than the default (GOMAXPROCS).
procs=${TEST_P:-3}
parallel=${TEST_PARALLEL:-8}
# The packages that take longest start first (go test builds and runs them in the order given),
# so that no long one starts at the end; the rest follow in import path order. Two modules: the
# test module (test/go.mod: the suites, the frameworks and the e2e) runs first, with most of the
# slow packages, then the main module (the providers' own unit and envtest tests).
slow=(test/e2e test/integration/chaos test/integration/hyperv test/integration/vcenter test/integration/move
  test/integration/rbac test/integration/badinput bootstrap/reconcilers/windowsconfig
  test/framework/harness/management test/integration/sharding test/framework/hypervsim
  test/framework/harness/guest test/integration/doctest test/integration/clusterctl)
# ordered DIR: the packages of the module in DIR, slow ones first.
ordered() {
  local dir=$1 module all p
  module=$("$GO" -C "$dir" list -m) || return 1
  mapfile -t all < <("$GO" -C "$dir" list ./...) || return 1
  local out=()
  for p in "${slow[@]}"; do
    [[ " ${all[*]} " == *" github.com/capwin/capwin/$p "* ]] && out+=("github.com/capwin/capwin/$p")
  done
  for p in "${all[@]}"; do
    [[ " ${out[*]} " == *" $p "* ]] || out+=("$p")
  done
  printf '%s\n' "${out[@]}"
}
mapfile -t testpkgs < <(ordered test) && ((${#testpkgs[@]} > 0)) || exit 1
mapfile -t mainpkgs < <(ordered .) && ((${#mainpkgs[@]} > 0)) || exit 1

# shellcheck disable=SC2086 # TEST_ARGS is a list of flags
{
  step e2e-vet "$GO" -C test vet -tags e2e ./e2e/...
  # The image builder's tests (a module of their own: ko compiles the managers from the packages
  # built above, flanneld for Windows from scratch) run beside the main module's.
  images=("$GO" -C hack/images test ./... -count=1 -timeout 20m ${TEST_ARGS:-})
  ("${images[@]}" >out/test-images.log 2>&1; echo $? >out/test-images.rc) &
  pkgs=("${testpkgs[@]}")
  step test-module "$GO" -C test test -p "$procs" -count=1 -timeout 30m -parallel "$parallel" ${TEST_ARGS:-} "${pkgs[@]}"
  pkgs=("${mainpkgs[@]}")
  step main-module "$GO" test -p "$procs" -count=1 -timeout 30m -parallel "$parallel" ${TEST_ARGS:-} "${pkgs[@]}"
  step e2e-sim "$GO" -C test test -tags e2e ./e2e/kind/sim -count=1 -timeout 10m -parallel "$parallel" ${TEST_ARGS:-}
  wait
  echo "== images: ${images[*]}" | tee -a "$log"
  tee -a "$log" <out/test-images.log
  [[ $(cat out/test-images.rc) == 0 ]] || failed+=(images)
}

total=$(($(date +%s) - begin))
{
  echo
  echo "slowest packages (seconds):"
  awk '($1 == "ok" || $1 == "FAIL") && $3 ~ /^[0-9.]+s$/ { sub(/s$/, "", $3); printf "%8.1f  %s\n", $3, $2 }' "$log" |
    sort -rn | head -10
  printf 'make test: %dm%02ds' $((total / 60)) $((total % 60))
  if [[ ${#failed[@]} -gt 0 ]]; then echo "; FAILED: ${failed[*]}"; else echo "; passed"; fi
} | tee -a "$log"
[[ ${#failed[@]} -eq 0 ]]
