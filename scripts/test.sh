#!/usr/bin/env bash
# make test: every test of the repository, then the total time and the ten slowest packages.
#
#   1. a compile and vet check of the kind e2e (build tag e2e; it needs Docker to run);
#   2. the main module's tests (unit, envtest, vcsim, simulated Hyper-V hosts and guests,
#      clusterctl, PowerShell parse checks), with the e2e's guest simulator tests;
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
# so that no long one starts at the end; the rest follow in import path order.
slow=(test/e2e test/integration/chaos test/integration/hyperv infrastructure/reconcilers/machine test/integration/move test/integration/rbac
  test/integration/badinput bootstrap/reconcilers/windowsconfig test/framework/harness/management test/integration/sharding
  test/framework/hypervsim test/framework/harness/guest test/integration/doctest test/integration/clusterctl)
module=$("$GO" list -m)
mapfile -t all < <("$GO" list ./...) || exit 1
pkgs=()
for p in "${slow[@]}"; do
  [[ " ${all[*]} " == *" $module/$p "* ]] && pkgs+=("$module/$p")
done
for p in "${all[@]}"; do
  [[ " ${pkgs[*]} " == *" $p "* ]] || pkgs+=("$p")
done

# shellcheck disable=SC2086 # TEST_ARGS is a list of flags
{
  step e2e-vet "$GO" vet -tags e2e ./test/e2e/...
  # The image builder's tests (a module of their own: ko compiles the managers from the packages
  # built above, flanneld for Windows from scratch) run beside the main module's.
  images=("$GO" -C hack/images test ./... -count=1 -timeout 20m ${TEST_ARGS:-})
  ("${images[@]}" >out/test-images.log 2>&1; echo $? >out/test-images.rc) &
  step unit "$GO" test -p "$procs" -count=1 -timeout 30m -parallel "$parallel" ${TEST_ARGS:-} "${pkgs[@]}"
  step e2e-sim "$GO" test -tags e2e ./test/e2e/kind/sim -count=1 -timeout 10m -parallel "$parallel" ${TEST_ARGS:-}
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
