#!/usr/bin/env bash
# retry N COMMAND...: run a download COMMAND up to N times, waiting 10 s, 20 s, ... between tries.
# On a busy machine a module proxy's TLS handshake can take longer than Go's 10 s limit
# ("net/http: TLS handshake timeout"); the go command does not try again by itself. Source this
# file for the function; only downloads go through it, never tests.
retry() {
  local n=$1 i
  shift
  for ((i = 1; ; i++)); do
    "$@" && return 0
    ((i < n)) || return 1
    echo "retry: '$*' failed (try $i of $n); again in $((10 * i)) s" >&2
    sleep $((10 * i))
  done
}
