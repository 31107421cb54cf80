#!/usr/bin/env bash
# make modules: download what the go command will fetch for lint, vuln and test (the modules of
# the main module, the test module, hack/tools, hack/images, hack/vuln and hack/e2e/helmrender, the
# cert-manager module, and actionlint), each download tried up
# to four times (scripts/retry.sh). Does nothing that needs the network once they are cached.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
# shellcheck source=scripts/retry.sh
source scripts/retry.sh
# shellcheck disable=SC2086 # GO may be a command with arguments (GO="env CGO_ENABLED=0 go")
for dir in . test hack/tools hack/images hack/vuln hack/e2e/helmrender; do
  retry 4 $GO -C "$dir" mod download
done
# make release-offline's manifests (scripts/offline-repository.sh, run by the doc test): the
# cert-manager module, whose Helm chart helmrender renders.
# shellcheck disable=SC2086
retry 4 $GO -C hack/e2e/certmanager mod download github.com/cert-manager/cert-manager
# shellcheck disable=SC2086
retry 4 $GO run "${ACTIONLINT_MODULE:-github.com/rhysd/actionlint/cmd/actionlint@v1.7.12}" -version >/dev/null
