# create.ps1 creates a machine's VM (generation 2) on a differencing disk of the parent, with its
# config drive, powered off. It returns the VM an earlier run created instead of a second one, and
# reuses the disk an interrupted run left behind.
param($In)
$vm = Find-CapwinVM $In
if ($null -ne $vm) {
    return Get-CapwinView $vm
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
    [IO.File]::WriteAllBytes((Join-Path $dir 'cidata.iso'), [Convert]::FromBase64String($In.configDrive))
}
$vm = New-VM -Name $In.name -Generation 2 -VHDPath $disk -Path $dir -MemoryStartupBytes $In.memoryBytes
Set-VM -VM $vm -Notes ('capwin-uid:' + $In.uid) -ProcessorCount $In.processors -AutomaticStopAction TurnOff -AutomaticCheckpointsEnabled $false
if ($In.dynamicMemory) {
    Set-VMMemory -VM $vm -DynamicMemoryEnabled $true -MinimumBytes $In.dynamicMemory.minimumBytes -MaximumBytes $In.dynamicMemory.maximumBytes -Buffer $In.dynamicMemory.bufferPercent
}
if ($In.secureBoot.enabled) {
    Set-VMFirmware -VM $vm -EnableSecureBoot On -SecureBootTemplate $In.secureBoot.template
} else {
    Set-VMFirmware -VM $vm -EnableSecureBoot Off
}
if ($In.nestedVirtualization) {
    Set-VMProcessor -VM $vm -ExposeVirtualizationExtensions $true
}
Get-VMNetworkAdapter -VM $vm | Remove-VMNetworkAdapter
foreach ($nic in $In.nics) {
    $adapter = Add-VMNetworkAdapter -VM $vm -SwitchName $nic.switch -StaticMacAddress $nic.mac -Passthru
    if ($nic.vlanId -gt 0) {
        Set-VMNetworkAdapterVlan -VMNetworkAdapter $adapter -Access -VlanId $nic.vlanId
    }
}
if ($In.configDrive) {
    Add-VMDvdDrive -VM $vm -Path (Join-Path $dir 'cidata.iso')
}
Set-VMFirmware -VM $vm -FirstBootDevice (Get-VMHardDiskDrive -VM $vm | Select-Object -First 1)
return Get-CapwinView $vm
