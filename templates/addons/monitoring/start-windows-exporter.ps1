# Starts windows_exporter on a Windows node, in a HostProcess container of WINDOWS_EXPORTER_IMAGE
# (capwin-windows-exporter: windows_exporter.exe at the image root). It opens the exporter's port
# in the node's firewall first (once: the rule stays, named capwin-windows-exporter, until the
# node is replaced). The pod sets PORT.
$ErrorActionPreference = 'Stop'

$root = $env:CONTAINER_SANDBOX_MOUNT_POINT
$port = [int]$env:PORT
$rule = 'capwin-windows-exporter'

$existing = Get-NetFirewallRule -Name $rule -ErrorAction SilentlyContinue
if ($null -eq $existing) {
    New-NetFirewallRule -Name $rule -DisplayName 'capwin windows_exporter' -Direction Inbound -Protocol TCP -LocalPort $port -Action Allow -Profile Any | Out-Null
    Write-Output "firewall: TCP $port open (rule $rule)"
}

$exporter = Join-Path $root 'windows_exporter.exe'
$config = Join-Path $root 'mounts\config\config.yml'
& $exporter "--config.file=$config" "--web.listen-address=:$port"
exit $LASTEXITCODE
