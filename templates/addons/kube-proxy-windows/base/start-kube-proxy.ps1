# Starts kube-proxy on a Windows node, in a HostProcess container of KUBE_PROXY_WINDOWS_IMAGE
# (capwin-kube-proxy-windows: kube-proxy.exe of the node's Kubernetes version at the image root).
#
# Windows kube-proxy runs in kernelspace mode only. On an overlay network it needs the HNS
# network's name and a source VIP: an address of the node's pod subnet that kube-proxy uses to
# SNAT service traffic. The pod sets CNI (calico or flannel), NETWORK_NAME, NODE_NAME, POD_CIDR,
# CNI_BIN_DIR and KUBERNETES_SERVICE_HOST/PORT (in-cluster config at the API server's endpoint).
$ErrorActionPreference = 'Stop'

$root = $env:CONTAINER_SANDBOX_MOUNT_POINT

# Windows Server ships Get-HnsNetwork (HostNetworkingService module); an image may carry hns.psm1.
if (-not (Get-Command Get-HnsNetwork -ErrorAction SilentlyContinue)) {
    Import-Module (Join-Path $root 'hns.psm1')
}

# flannel: reserve the source VIP with host-local in the IPAM store flannel's CNI plugin uses, so
# no pod gets it. host-local refuses a second reservation for the same ID, so the result is kept
# and reused for as long as the node keeps its subnet.
function Get-FlannelSourceVip([string]$Network, [string]$Subnet) {
    $state = 'C:\var\lib\kube-proxy-windows'
    $cache = Join-Path $state ('source-vip-' + $Subnet.Replace('/', '_') + '.json')
    if (-not (Test-Path $cache)) {
        New-Item -ItemType Directory -Force -Path $state | Out-Null
        $env:CNI_COMMAND = 'ADD'
        $env:CNI_CONTAINERID = 'kube-proxy-source-vip'
        $env:CNI_NETNS = 'none'
        $env:CNI_IFNAME = 'eth0'
        $env:CNI_PATH = $env:CNI_BIN_DIR
        $request = '{"cniVersion": "0.3.1", "name": "' + $Network + '", "ipam": {"type": "host-local", ' +
            '"ranges": [[{"subnet": "' + $Subnet + '"}]], "dataDir": "/var/lib/cni/networks"}}'
        $result = $request | & (Join-Path $env:CNI_BIN_DIR 'host-local.exe')
        if ($LASTEXITCODE -ne 0) {
            throw "host-local failed: $result"
        }
        [System.IO.File]::WriteAllText($cache, ($result -join "`n"))
    }
    $reply = Get-Content -Raw -Path $cache | ConvertFrom-Json
    return $reply.ips[0].address.Split('/')[0]
}

Write-Host "Waiting for HNS network $env:NETWORK_NAME"
while (-not ($network = Get-HnsNetwork | Where-Object Name -EQ $env:NETWORK_NAME)) {
    Start-Sleep -Seconds 2
}

switch ($env:CNI) {
    'calico' {
        # calico-node-windows gives the host an endpoint in the overlay; its address is the VIP.
        $endpointName = $env:NETWORK_NAME + '_ep'
        Write-Host "Waiting for HNS endpoint $endpointName"
        while (-not ($endpoint = Get-HnsEndpoint | Where-Object Name -EQ $endpointName)) {
            Start-Sleep -Seconds 2
        }
        $sourceVip = $endpoint.IPAddress
    }
    'flannel' {
        $sourceVip = Get-FlannelSourceVip $env:NETWORK_NAME $network.Subnets[0].AddressPrefix
    }
    default {
        throw "unknown CNI '$env:CNI' (calico or flannel)"
    }
}

$kubeProxy = Join-Path $root 'kube-proxy.exe'
if (-not (Test-Path $kubeProxy)) {
    throw "the image has no kube-proxy.exe at its root ($kubeProxy)"
}
$flags = @(
    "--hostname-override=$env:NODE_NAME",
    '--proxy-mode=kernelspace',
    "--network-name=$env:NETWORK_NAME",
    "--source-vip=$sourceVip",
    "--cluster-cidr=$env:POD_CIDR",
    '--v=2'
)
Write-Host "Starting $kubeProxy $flags"
& $kubeProxy @flags
exit $LASTEXITCODE
