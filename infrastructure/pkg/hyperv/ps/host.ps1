# host.ps1 reports the host's capacity and prepares capwin's folders.
param($In)
New-Item -ItemType Directory -Force -Path $In.vmPath, $In.diskPath | Out-Null
$os = Get-CimInstance -ClassName 'Win32_OperatingSystem'
$vmHost = Get-VMHost
$cluster = ''
if ($In.cluster) {
    $cluster = "$((Assert-CapwinCluster $In).Name)"
}
return @{
    name              = $env:COMPUTERNAME
    freeMemoryMiB     = [int64]($os.FreePhysicalMemory / 1024)
    logicalProcessors = $vmHost.LogicalProcessorCount
    vms               = @(Get-VM).Count
    switches          = @(Get-VMSwitch | ForEach-Object { $_.Name })
    build             = [Environment]::OSVersion.Version.Build
    cluster           = $cluster
}
