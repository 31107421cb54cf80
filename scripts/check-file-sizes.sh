#!/usr/bin/env bash
# Fails when a tracked file is larger than LIMIT bytes (default 512 KiB): build outputs, logs,
# profiles and generated data belong in .gitignore'd folders, made again by the scripts that made
# them. One submission may carry only a bounded amount of change, and a stray binary once cost a
# whole session's work.
set -euo pipefail
limit=${LIMIT:-524288}
cd "$(git rev-parse --show-toplevel)"
big=$(git ls-files -z | xargs -0 -r stat -c '%s %n' 2>/dev/null | awk -v l="$limit" '$1 > l')
if [ -n "$big" ]; then
  echo "tracked files over $limit bytes (remove them from git; make them with a script instead):"
  echo "$big"
  exit 1
fi
