#!/bin/bash
# Installs a CSI driver with Windows node support from its upstream manifests, then drops the
# Job's cluster-admin binding. Every step is idempotent: a failed step fails the pod, and the
# Job's restarts (backoffLimit, with Kubernetes' growing back-off) start it over.
#
# Environment: DRIVER (vsphere or smb), VERSION (the driver release), MANIFESTS_URL (the
# upstream manifests or a mirror of them); for vsphere also VSPHERE_SERVER, VSPHERE_THUMBPRINT,
# VSPHERE_DATACENTER, VSPHERE_USERNAME, VSPHERE_PASSWORD and CLUSTER_ID.
set -euo pipefail

apply() {
  kubectl apply --server-side --force-conflicts --field-manager=capwin-storage-install -f "$1"
}

# quote writes a value as a double-quoted gcfg string (csi-vsphere.conf).
quote() {
  local v="${1//\\/\\\\}"
  printf '"%s"' "${v//\"/\\\"}"
}

vsphere_config() {
  local server="${VSPHERE_SERVER%%:*}" port=443
  if [ "$server" != "$VSPHERE_SERVER" ]; then
    port="${VSPHERE_SERVER##*:}"
  fi
  printf '[Global]\ncluster-id = %s\n\n[VirtualCenter %s]\n' "$(quote "$CLUSTER_ID")" "$(quote "$server")"
  printf 'port = %s\nthumbprint = %s\nuser = %s\npassword = %s\ndatacenters = %s\n' \
    "$(quote "$port")" "$(quote "$VSPHERE_THUMBPRINT")" "$(quote "$VSPHERE_USERNAME")" \
    "$(quote "$VSPHERE_PASSWORD")" "$(quote "$VSPHERE_DATACENTER")"
}

# config_secret stores csi-vsphere.conf as the Secret the driver reads.
config_secret() {
  kubectl -n vmware-system-csi create secret generic vsphere-config-secret \
    --from-file=csi-vsphere.conf=/tmp/csi-vsphere.conf --dry-run=client -o yaml | kubectl apply -f -
}

case "$DRIVER" in
vsphere)
  vsphere_config > /tmp/csi-vsphere.conf
  config_secret
  apply "${MANIFESTS_URL%/}/${VERSION}/manifests/vanilla/vsphere-csi-driver.yaml"
  # The Windows node DaemonSet of the driver runs only with this feature state on.
  kubectl -n vmware-system-csi patch configmap internal-feature-states.csi.vsphere.vmware.com \
    --type merge -p '{"data":{"csi-windows-support":"true"}}'
  ;;
smb)
  # csi-smb-node-windows.yaml is the Windows node plugin that works through csi-proxy.
  for file in rbac-csi-smb.yaml csi-smb-driver.yaml csi-smb-controller.yaml csi-smb-node.yaml csi-smb-node-windows.yaml; do
    apply "${MANIFESTS_URL%/}/${VERSION}/${file}"
  done
  ;;
*)
  echo "unknown DRIVER '${DRIVER}' (vsphere or smb)" >&2
  exit 1
  ;;
esac

kubectl delete clusterrolebinding capwin-storage-install --ignore-not-found
echo "CSI driver ${DRIVER} ${VERSION} installed."
