#!/bin/bash
# Installs Calico through the Tigera operator: the upstream CRDs and operator of CALICO_VERSION,
# then the Installation and APIServer mounted at /config. Every step is idempotent, so a retried
# Job pod simply starts over.
#
# Environment: CALICO_VERSION (e.g. v3.32.2), CALICO_MANIFESTS_URL (a mirror of
# https://raw.githubusercontent.com/projectcalico/calico: <url>/<version>/manifests/<file>).
set -euo pipefail

manifests="${CALICO_MANIFESTS_URL%/}/${CALICO_VERSION}/manifests"

# retry runs a command until it succeeds, for at most about ten minutes: the API server and the
# download can both be briefly unavailable while the cluster comes up.
retry() {
  local attempt=1
  until "$@"; do
    if [ "$attempt" -ge 60 ]; then
      echo "giving up after $attempt attempts: $*" >&2
      return 1
    fi
    attempt=$((attempt + 1))
    sleep 10
  done
}

# Server-side apply: the CRDs are too large for the last-applied annotation of client-side apply.
apply() {
  kubectl apply --server-side --force-conflicts --field-manager=capwin-calico-install -f "$1"
}

echo "Applying ${manifests}/operator-crds.yaml"
retry apply "${manifests}/operator-crds.yaml"
retry kubectl wait --for=condition=Established --timeout=60s \
  crd/installations.operator.tigera.io crd/apiservers.operator.tigera.io

echo "Applying ${manifests}/tigera-operator.yaml"
retry apply "${manifests}/tigera-operator.yaml"

echo "Applying the Installation and APIServer"
retry apply /config/custom-resources.yaml

# Nothing needs cluster-admin any more: drop the binding of this Job's ServiceAccount.
kubectl delete clusterrolebinding capwin-calico-install --ignore-not-found
echo "Calico ${CALICO_VERSION} installed; the Tigera operator takes it from here."
