# create.ps1 creates a machine's VM (generation 2) on a differencing disk of the parent, with its
# config drive, powered off. Every step may run again: a VM an earlier run finished is returned as
# it is; one an interrupted run left behind is finished, reusing the folder, disk and config drive.
# The notes say whose VM it is (uid, and namespace/name for clusterctl move) right after New-VM,
# and that it is complete only at the very end, once every setting is checked: capwin starts no
# VM without that line.
param($In)
$complete = 'capwin-complete:' + $In.uid
$vm = Find-CapwinVM $In
if ($null -ne $vm -and "$($vm.Notes)".Contains($complete)) {
    return Get-CapwinView $vm
}
if ($null -ne $vm -and $vm.State -ne 'Off') {
    Stop-Capwin 'Failed' ('VM {0} of an interrupted create is not off ({1}); turn it off to let capwin finish it' -f $vm.Id, $vm.State)
}
if (-not (Test-Path -LiteralPath $In.parentDisk)) {
    Stop-Capwin 'InvalidSpec' ('parent disk {0} does not exist on host {1}' -f $In.parentDisk, $env:COMPUTERNAME)
}
foreach ($switch in $In.nics) {
    if ($null -eq (Get-VMSwitch -Name $switch.switch -ErrorAction SilentlyContinue)) {
        Stop-Capwin 'InvalidSpec' ('virtual switch {0} does not exist on host {1}' -f $switch.switch, $env:COMPUTERNAME)
    }
}
$dir = Get-CapwinVMDir $In
$disk = Get-CapwinDiskPath $In
$iso = Join-Path $dir 'cidata.iso'
New-Item -ItemType Directory -Force -Path $dir, $In.diskPath | Out-Null
if (-not (Test-Path -LiteralPath $disk)) {
    New-VHD -Path $disk -ParentPath $In.parentDisk -Differencing | Out-Null
}
if ($In.diskBytes -gt 0) {
    $size = (Get-VHD -Path $disk).Size
    if ($In.diskBytes -lt $size) {
        Stop-Capwin 'InvalidSpec' ('diskGiB is smaller than the parent disk ({0} bytes)' -f $size)
    }
    if ($In.diskBytes -gt $size) {
        Resize-VHD -Path $disk -SizeBytes $In.diskBytes
    }
}
if ($In.configDrive) {
    [IO.File]::WriteAllBytes($iso, [Convert]::FromBase64String($In.configDrive))
}
if ($null -eq $vm) {
    $vm = New-VM -Name $In.name -Generation 2 -VHDPath $disk -Path $dir -MemoryStartupBytes $In.memoryBytes
} elseif (@(Get-VMHardDiskDrive -VM $vm | Where-Object { $_.Path -eq $disk }).Count -eq 0) {
    Add-VMHardDiskDrive -VM $vm -Path $disk
}
$notes = "capwin-uid:{0}`ncapwin-owner:{1}" -f $In.uid, $In.owner
Set-VM -VM $vm -Notes $notes -ProcessorCount $In.processors -MemoryStartupBytes $In.memoryBytes -AutomaticStopAction TurnOff -AutomaticCheckpointsEnabled $false
if ($In.dynamicMemory) {
    Set-VMMemory -VM $vm -DynamicMemoryEnabled $true -MinimumBytes $In.dynamicMemory.minimumBytes -MaximumBytes $In.dynamicMemory.maximumBytes -Buffer $In.dynamicMemory.bufferPercent
} else {
    Set-VMMemory -VM $vm -DynamicMemoryEnabled $false
}
if ($In.secureBoot.enabled) {
    Set-VMFirmware -VM $vm -EnableSecureBoot On -SecureBootTemplate $In.secureBoot.template
} else {
    Set-VMFirmware -VM $vm -EnableSecureBoot Off
}
Set-VMProcessor -VM $vm -ExposeVirtualizationExtensions ([bool]$In.nestedVirtualization)
Get-VMNetworkAdapter -VM $vm | Remove-VMNetworkAdapter
foreach ($nic in $In.nics) {
    $adapter = Add-VMNetworkAdapter -VM $vm -SwitchName $nic.switch -StaticMacAddress $nic.mac -Passthru
    if ($nic.vlanId -gt 0) {
        Set-VMNetworkAdapterVlan -VMNetworkAdapter $adapter -Access -VlanId $nic.vlanId
    }
}
Get-VMDvdDrive -VM $vm | Remove-VMDvdDrive
if ($In.configDrive) {
    Add-VMDvdDrive -VM $vm -Path $iso
}
Set-VMFirmware -VM $vm -FirstBootDevice (Get-VMHardDiskDrive -VM $vm | Where-Object { $_.Path -eq $disk } | Select-Object -First 1)
# Check what was set before the VM is marked complete.
$want = @(foreach ($nic in $In.nics) { $nic.mac }) -join ','
$have = @(Get-VMNetworkAdapter -VM $vm | ForEach-Object { $_.MacAddress }) -join ','
if ($have -ne $want) {
    Stop-Capwin 'Failed' ('VM {0} has network adapters {1} after create, want {2}' -f $vm.Id, $have, $want)
}
if ($In.configDrive -and @(Get-VMDvdDrive -VM $vm | Where-Object { $_.Path -eq $iso }).Count -ne 1) {
    Stop-Capwin 'Failed' ('VM {0} has no config drive {1} after create' -f $vm.Id, $iso)
}
Set-VM -VM $vm -Notes ("{0}`n{1}" -f $notes, $complete)
return Get-CapwinView (Get-VM -Id $vm.Id)
