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
  echo "== $name: $*" | tee -a "$log"
  "$@" 2>&1 | tee -a "$log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=("$name")
}

assets=$(scripts/envtest-assets.sh) || exit 1
export KUBEBUILDER_ASSETS=$assets
# Most tests wait on controllers, simulators and timers rather than compute: run more of a
# package's parallel tests at once than the default (GOMAXPROCS).
parallel=${TEST_PARALLEL:-8}
# shellcheck disable=SC2086 # TEST_ARGS is a list of flags
{
  step e2e-vet "$GO" vet -tags e2e ./test/e2e/...
  step unit "$GO" test ./... -count=1 -timeout 30m -parallel "$parallel" ${TEST_ARGS:-}
  step e2e-sim "$GO" test -tags e2e ./test/e2e/kind/sim -count=1 -timeout 10m -parallel "$parallel" ${TEST_ARGS:-}
  step images "$GO" -C hack/images test ./... -count=1 -timeout 20m ${TEST_ARGS:-}
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
