#!/usr/bin/env bash
# The sandbox of docs/sandbox.md: a management cluster for clusterctl init (its Deployments run as
# local processes), vcsim with the quick start's templates, two simulated Hyper-V hosts and
# simulated guests, in the background
# until `scripts/sandbox.sh down`.
#
#   scripts/sandbox.sh up [DIR]     start it (DIR: .sandbox), wait until ready, print what to source
#   scripts/sandbox.sh down [DIR]   stop it and remove DIR
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
cmd=${1:-}
dir=${2:-.sandbox}

running() { [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; }

case "$cmd" in
up)
  if running; then
    echo "The sandbox already runs (pid $(cat "$dir/pid")): source $dir/env.sh, or make sandbox-down first."
    exit 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir" bin
  scripts/envtest-assets.sh --check >/dev/null ||
    echo "First run: building kube-apiserver and etcd from source (a few minutes on 2 cores; cached in ~/.cache/capwin)"
  assets=$(scripts/envtest-assets.sh)
  "$GO" -C test build -o ../bin/sandbox ./cmd/sandbox
  echo "Starting the sandbox (the first start builds Cluster API's, capwin's and cert-manager's managers: several minutes; log: $dir/sandbox.log)"
  KUBEBUILDER_ASSETS=$assets setsid nohup bin/sandbox -dir "$dir" -root "$PWD" >"$dir/sandbox.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  until [ -f "$dir/env.sh" ]; do
    if ! running; then
      echo "The sandbox did not start:" >&2
      tail -n 30 "$dir/sandbox.log" >&2
      exit 1
    fi
    sleep 1
  done
  cat <<EOF
The sandbox runs (pid $(cat "$dir/pid")). In each shell you try the quick start in:

  source $dir/env.sh

It sets KUBECONFIG to the sandbox's management cluster and the quick start's vCenter variables:
$(sed -n 's/^export \([A-Z_]*\)=.*/  \1/p' "$dir/env.sh" | tr -d '\n')

For Hyper-V (two simulated hosts), source $dir/env-hyperv.sh after it (docs/sandbox.md).

Then follow docs/sandbox.md from "Install the providers". Logs: $dir/sandbox.log, $dir/logs,
$dir/management/pods. Stop it with: make sandbox-down
EOF
  ;;
down)
  if running; then
    pid=$(cat "$dir/pid")
    kill "$pid"
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid"
    fi
    echo "Stopped the sandbox (pid $pid)."
  else
    echo "No sandbox runs in $dir."
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 up|down [DIR]" >&2
  exit 2
  ;;
esac
