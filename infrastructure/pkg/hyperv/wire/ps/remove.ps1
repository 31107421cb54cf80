# remove.ps1 deletes a machine's VM, its differencing disk and its folder (config drive, data disks), wherever
# they are: the VM's own disk and folder are found through the VM (the cluster's folders may have
# changed since it was created), and only files named after the machine's UID are deleted, never a
# parent disk. What is already gone counts as removed.
param($In)

# Remove-CapwinClusterRole unregisters the machine's cluster role (named after its UID) with its
# resources, so the cluster no longer restarts or moves the VM; the VM itself stays, for Remove-VM.
# Remove-ClusterGroup -Name -RemoveResources -Force, see
# https://learn.microsoft.com/powershell/module/failoverclusters/remove-clustergroup. A role already
# gone counts as removed.
function Remove-CapwinClusterRole {
    param($In)
    Assert-CapwinCluster $In | Out-Null
    if ($null -ne (Get-ClusterGroup -Name $In.uid -ErrorAction SilentlyContinue)) {
        Remove-ClusterGroup -Name $In.uid -RemoveResources -Force
    }
}

$ownDisk = $In.uid + '.vhdx'
$paths = @((Get-CapwinDiskPath $In), (Get-CapwinVMDir $In))
$vm = Find-CapwinVM $In
if ($In.cluster) {
    Remove-CapwinClusterRole $In
}
if ($null -ne $vm) {
    foreach ($drive in @(Get-VMHardDiskDrive -VM $vm)) {
        if ((Split-Path -Leaf $drive.Path) -eq $ownDisk) {
            $paths += $drive.Path
        }
    }
    # New-VM keeps the configuration in <folder>\<name>; capwin's folder is named after the UID.
    foreach ($dir in @($vm.Path, (Split-Path -Parent $vm.Path))) {
        if ($dir -and (Split-Path -Leaf $dir) -eq $In.uid) {
            $paths += $dir
        }
    }
    if ($vm.State -ne 'Off') {
        Stop-VM -VM $vm -TurnOff -Force
    }
    # The GPUs go back before the VM: an assigned device to the host's assignable devices (still
    # dismounted from the host, ready for the next VM), a partition to its GPU.
    $devices = @(Get-VMAssignableDevice -VM $vm)
    if ($devices.Count -gt 0) {
        Remove-VMAssignableDevice -VMAssignableDevice $devices
    }
    if (@(Get-VMGpuPartitionAdapter -VM $vm).Count -gt 0) {
        Remove-VMGpuPartitionAdapter -VM $vm
    }
    Remove-VM -VM $vm -Force
}
foreach ($path in $paths) {
    if (Test-Path -LiteralPath $path) {
        Remove-Item -LiteralPath $path -Recurse -Force
    }
}
return @{ removed = $true }
