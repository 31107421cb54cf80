#!/usr/bin/env bash
# Runs every fuzz target of the repository (every `func FuzzXxx(f *testing.F)` in a _test.go
# file, found anew on each run) for FUZZTIME each, one after the other, and prints a table.
#
#   FUZZTIME=60s scripts/fuzz.sh          all targets
#   FUZZTIME=10m scripts/fuzz.sh Report   only targets whose name contains "Report"
#
# FUZZPARALLEL sets the workers per target (default: go test's, GOMAXPROCS). A failing input is
# written by go test to the package's testdata/fuzz/<target>/; commit it as a seed once fixed.
set -uo pipefail

FUZZTIME=${FUZZTIME:-60s}
GO=${GO:-go}
filter=${1:-}
cd "$(dirname "$0")/.."

# Go minimises each new interesting input for up to 60 s by default, which on large inputs eats
# the whole run; a few seconds keep the runs fuzzing.
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}

parallel=()
if [[ -n "${FUZZPARALLEL:-}" ]]; then
	parallel=(-parallel "$FUZZPARALLEL")
fi

# "dir name" per target, sorted.
mapfile -t targets < <(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
	sed -E 's#^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' | sort -u)

results=()
failed=0
for t in "${targets[@]}"; do
	dir=${t% *} name=${t#* }
	[[ -z "$filter" || "$name" == *"$filter"* ]] || continue
	echo "== $name (./$dir) for $FUZZTIME"
	log=$(mktemp)
	# The test module (test/go.mod) runs its own packages.
	mod=. pkg=./$dir
	if [[ "$dir" == test/* ]]; then mod=test pkg=./${dir#test/}; fi
	# shellcheck disable=SC2086 # GO may be a command with arguments
	if $GO -C "$mod" test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" -timeout 0 "${parallel[@]}" 2>&1 | tee "$log"; then
		result=ok
	else
		result=FAIL
		failed=1
	fi
	execs=$(grep -Eo 'execs: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	rm -f "$log"
	results+=("$(printf '%-26s %-40s %-5s %s' "$name" "./$dir" "$result" "${execs:-?}")")
done

echo
printf '%-26s %-40s %-5s %s\n' TARGET PACKAGE RESULT EXECS
printf '%s\n' "${results[@]}"
exit $failed
