# host.ps1 reports the host's capacity (memory, processors, free GPUs) and prepares capwin's folders.
param($In)
New-Item -ItemType Directory -Force -Path $In.vmPath, $In.diskPath | Out-Null
$os = Get-CimInstance -ClassName 'Win32_OperatingSystem'
$vmHost = Get-VMHost
# GPUs free for new VMs: partitions (Get-VMHostPartitionableGpu and Get-VMGpuPartitionAdapter, on
# hosts whose Hyper-V module has them) and devices dismounted for assignment that no VM holds.
$partitions = 0
$inUse = 0
if (Get-Command -Name 'Get-VMHostPartitionableGpu' -ErrorAction SilentlyContinue) {
    foreach ($gpu in @(Get-VMHostPartitionableGpu)) {
        $partitions += $gpu.PartitionCount
    }
    # A host without partitions has none in use: its VMs are not asked one by one.
    if ($partitions -gt 0) {
        foreach ($vm in @(Get-VM)) {
            $inUse += @(Get-VMGpuPartitionAdapter -VM $vm).Count
        }
    }
}
$cluster = ''
if ($In.cluster) {
    $cluster = "$((Assert-CapwinCluster $In).Name)"
}
return @{
    name               = $env:COMPUTERNAME
    freeMemoryMiB      = [int64]($os.FreePhysicalMemory / 1024)
    logicalProcessors  = $vmHost.LogicalProcessorCount
    vms                = @(Get-VM).Count
    switches           = @(Get-VMSwitch | ForEach-Object { $_.Name })
    build              = [Environment]::OSVersion.Version.Build
    gpuPartitions      = $partitions
    gpuPartitionsInUse = $inUse
    assignableDevices  = @(Get-VMHostAssignableDevice | ForEach-Object { $_.LocationPath })
    cluster            = $cluster
}
