#!/bin/bash
# Installs the Windows gMSA admission webhook and the GMSACredentialSpec CRD of
# kubernetes-sigs/windows-gmsa at GMSA_VERSION: downloads the release's deploy files, refuses them
# unless their SHA-256 matches, creates the webhook's serving certificate (self-signed, kept in
# the webhook's Secret so a retried pod reuses it), renders the upstream template and applies it.
#
# Environment: GMSA_VERSION, GMSA_MANIFESTS_URL (a mirror of
# https://raw.githubusercontent.com/kubernetes-sigs/windows-gmsa: <url>/<version>/admission-webhook/deploy/<file>),
# GMSA_CRD_SHA256, GMSA_WEBHOOK_SHA256, GMSA_WEBHOOK_IMAGE. Needs kubectl, curl, openssl, sha256sum, sed.
set -euo pipefail

namespace=gmsa-system
name=gmsa-webhook
work=$(mktemp -d)
deploy="${GMSA_MANIFESTS_URL%/}/${GMSA_VERSION}/admission-webhook/deploy"

for tool in kubectl curl openssl sha256sum sed base64; do
  if ! command -v "$tool" >/dev/null; then
    echo "this image lacks ${tool}: set GMSA_INSTALL_IMAGE to an image with kubectl, curl, openssl and coreutils" >&2
    exit 1
  fi
done

# fetch downloads one deploy file and checks it against its pinned SHA-256.
fetch() {
  local file="$1" want="$2" got
  curl -fsSL --retry 10 --retry-all-errors --retry-delay 5 -o "${work}/${file}" "${deploy}/${file}"
  got=$(sha256sum "${work}/${file}" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "refusing ${deploy}/${file}: SHA-256 ${got}, pinned ${want} (GMSA_VERSION ${GMSA_VERSION})" >&2
    return 1
  fi
}

# certificate prints the base64 serving certificate and key ("cert key"): the ones in the
# webhook's Secret when it exists, otherwise new ones. The certificate is self-signed and is its
# own CA bundle; it names the webhook's Service.
certificate() {
  local cert key host="${name}.${namespace}.svc"
  cert=$(kubectl -n "$namespace" get secret "$name" -o 'jsonpath={.data.tls_certificate}' 2>/dev/null || true)
  key=$(kubectl -n "$namespace" get secret "$name" -o 'jsonpath={.data.tls_private_key}' 2>/dev/null || true)
  if [ -z "$cert" ] || [ -z "$key" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=${host}" \
      -addext "subjectAltName=DNS:${host},DNS:${host}.cluster.local" \
      -addext "extendedKeyUsage=serverAuth" \
      -keyout "${work}/key.pem" -out "${work}/cert.pem" 2>/dev/null
    cert=$(base64 -w0 "${work}/cert.pem")
    key=$(base64 -w0 "${work}/key.pem")
  fi
  echo "$cert $key"
}

# render fills in the upstream template's placeholders; the Deployment tolerates the control
# plane, the only Linux nodes of most capwin clusters.
render() {
  local cert="$1" key="$2" tolerations
  tolerations='\n      tolerations:\n      - key: node-role.kubernetes.io/control-plane\n        operator: Exists\n        effect: NoSchedule'
  sed -e "s|\${NAMESPACE}|${namespace}|g" -e "s|\${NAME}|${name}|g" \
    -e "s|\${RBAC_ROLE_NAME}|${namespace}-${name}-rbac-role|g" \
    -e "s|\${IMAGE_NAME}|${GMSA_WEBHOOK_IMAGE}|g" -e "s|\${TOLERATIONS}|${tolerations}|g" \
    -e "s|\${TLS_CERTIFICATE}|${cert}|g" -e "s|\${TLS_PRIVATE_KEY}|${key}|g" \
    -e "s|\${CA_BUNDLE}|${cert}|g" "${work}/gmsa-webhook.yml.tpl" > "${work}/gmsa-webhook.yml"
  if grep -n '\${' "${work}/gmsa-webhook.yml" >&2; then
    echo "gmsa-webhook.yml.tpl of ${GMSA_VERSION} has placeholders this installer does not know" >&2
    return 1
  fi
}

apply() {
  kubectl apply --server-side --force-conflicts --field-manager=capwin-gmsa-install -f "$1"
}

fetch gmsa-crd.yml "$GMSA_CRD_SHA256"
fetch gmsa-webhook.yml.tpl "$GMSA_WEBHOOK_SHA256"
pair=$(certificate)
render "${pair%% *}" "${pair##* }"

echo "Applying gmsa-crd.yml and the webhook of ${GMSA_VERSION}"
apply "${work}/gmsa-crd.yml"
kubectl wait --for=condition=Established --timeout=60s crd/gmsacredentialspecs.windows.k8s.io
apply "${work}/gmsa-webhook.yml"
kubectl -n "$namespace" rollout status "deployment/${name}" --timeout=600s

kubectl delete clusterrolebinding capwin-gmsa-install --ignore-not-found
echo "gMSA webhook ${GMSA_VERSION} installed."
