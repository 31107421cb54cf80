# Starts flanneld on a Windows node, in a HostProcess container of FLANNEL_WINDOWS_IMAGE.
#
# The image (capwin-flanneld-windows, built with the release) carries flanneld.exe at its root.
# CNI plugins the image carries in cni\ are installed into CNI_BIN_DIR; the node must end up with
# flannel.exe, sdnoverlay.exe and host-local.exe there (from the image or the node image). The
# pod sets NODE_NAME,
# NODE_IP, KUBERNETES_SERVICE_HOST/PORT, CNI_BIN_DIR and CNI_CONF_DIR, and mounts the
# kube-flannel-windows-cfg ConfigMap at mounts\config.
$ErrorActionPreference = 'Stop'

$root = $env:CONTAINER_SANDBOX_MOUNT_POINT
$config = Join-Path $root 'mounts\config'

# 1. CNI plugins. A plugin in use by a pod being created cannot be overwritten; it is then the
#    same file from an earlier start, so a failed copy is only a warning.
New-Item -ItemType Directory -Force -Path $env:CNI_BIN_DIR, $env:CNI_CONF_DIR | Out-Null
foreach ($plugin in Get-ChildItem -Path (Join-Path $root 'cni') -Filter '*.exe' -ErrorAction SilentlyContinue) {
    $target = Join-Path $env:CNI_BIN_DIR $plugin.Name
    if ((Test-Path $target) -and
        (Get-FileHash $target).Hash -eq (Get-FileHash $plugin.FullName).Hash) {
        continue
    }
    try {
        Copy-Item -Force -Path $plugin.FullName -Destination $target
    } catch {
        Write-Warning "cannot update ${target}: $_"
    }
}

$missing = @('flannel.exe', 'sdnoverlay.exe', 'host-local.exe') |
    Where-Object { -not (Test-Path (Join-Path $env:CNI_BIN_DIR $_)) }
if ($missing) {
    throw "CNI plugins missing in ${env:CNI_BIN_DIR}: $($missing -join ', ')"
}

# 2. CNI config: the ConfigMap's, with this node's address as the VXLAN provider address.
$cni = Get-Content -Raw -Path (Join-Path $config 'cni-conf.json') | ConvertFrom-Json
foreach ($arg in $cni.delegate.AdditionalArgs) {
    if ($arg.Value.Type -eq 'ProviderAddress') {
        $arg.Value.Settings.ProviderAddress = $env:NODE_IP
    }
}
# Written without a byte order mark, which CNI's JSON parser rejects.
$cniFile = Join-Path $env:CNI_CONF_DIR '10-flannel.conf'
[System.IO.File]::WriteAllText($cniFile, ($cni | ConvertTo-Json -Depth 20))
Write-Host "Wrote $cniFile"

# 3. flanneld: leases this node's podCIDR and creates the HNS network flannel.4096.
$flanneld = Join-Path $root 'flanneld.exe'
if (-not (Test-Path $flanneld)) {
    throw "the image has no flanneld.exe at its root ($flanneld)"
}
$netConf = Join-Path $config 'net-conf.json'
Write-Host "Starting $flanneld on $env:NODE_NAME ($env:NODE_IP)"
& $flanneld --kube-subnet-mgr "--iface=$env:NODE_IP" "--net-config-path=$netConf"
exit $LASTEXITCODE
