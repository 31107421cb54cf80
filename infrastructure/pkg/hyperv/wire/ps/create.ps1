# create.ps1 creates a machine's VM (generation 2) on a differencing disk of the parent, with its
# config drive, powered off. Every step may run again: a VM an earlier run finished is returned as
# it is; one an interrupted run left behind is finished, reusing the folder, disk and config drive.
# The notes say whose VM it is (uid, and namespace/name for clusterctl move) right after New-VM,
# and that it is complete only at the very end, once every setting is checked: capwin starts no
# VM without that line. SCSI controller 0 holds the OS disk at location 0, the data disks at the
# locations $In gives (1, 2, ...) and the config drive after them: the guest finds data disk i at
# SCSI target 0, LUN i+1. A VM with a GPU is created only when the host has one free (checked
# before anything is made) and gets it before it is marked complete.
param($In)

# New-CapwinDataDisk creates a data disk's VHDX, or keeps the one an interrupted run made when it
# has the size and type asked for. Any other file there may hold someone's data: never replaced.
function New-CapwinDataDisk {
    param([string]$Path, $Disk)
    if (Test-Path -LiteralPath $Path) {
        $vhd = Get-VHD -Path $Path
        if ($vhd.Size -ne $Disk.sizeBytes -or "$($vhd.VhdType)" -ne $Disk.type) {
            Stop-Capwin 'Failed' ('data disk {0} exists as a {1} disk of {2} bytes, want {3} of {4} bytes; capwin never replaces a disk: move it away to let capwin create it' -f $Path, $vhd.VhdType, $vhd.Size, $Disk.type, $Disk.sizeBytes)
        }
        return
    }
    # New-VHD without a parent or source disk: -SizeBytes with either -Dynamic or -Fixed.
    if ($Disk.type -eq 'Fixed') {
        New-VHD -Path $Path -SizeBytes $Disk.sizeBytes -Fixed | Out-Null
    } else {
        New-VHD -Path $Path -SizeBytes $Disk.sizeBytes -Dynamic | Out-Null
    }
}

# Get-CapwinDrive returns the VM's hard disk drive at a location of SCSI controller 0 when it is
# the file Path.
function Get-CapwinDrive {
    param($VM, [string]$Path, [int]$Location)
    return Get-VMHardDiskDrive -VM $VM -ControllerType SCSI -ControllerNumber 0 -ControllerLocation $Location | Where-Object { $_.Path -eq $Path } | Select-Object -First 1
}

# Enable-CapwinTpm gives the VM a local key protector, then its TPM: Set-VMKeyProtector
# -NewLocalKeyProtector and Enable-VMTPM, see
# https://learn.microsoft.com/powershell/module/hyper-v/set-vmkeyprotector and
# https://learn.microsoft.com/powershell/module/hyper-v/enable-vmtpm. A local protector is guarded by
# the host's untrusted guardian, not a Host Guardian Service. A VM whose TPM is on keeps its
# protector (a new one would lock its TPM's keys away); one an interrupted run gave a protector
# keeps it (while there is none, Get-VMKeyProtector returns at most 4 bytes: .Length counts the
# bytes whether they come as one array or one by one).
function Enable-CapwinTpm {
    param($VM)
    if ((Get-VMSecurity -VM $VM).TpmEnabled) {
        return
    }
    if ((Get-VMKeyProtector -VM $VM).Length -le 4) {
        Set-VMKeyProtector -VM $VM -NewLocalKeyProtector
    }
    Enable-VMTPM -VM $VM
}

# Get-CapwinAssignable returns the devices a VM may be given (gpu mode Assign): those an operator
# dismounted from the host and no VM holds (Get-VMHostAssignableDevice), only the one the spec's
# locationPath names when it names one.
function Get-CapwinAssignable {
    param($Gpu)
    return @(Get-VMHostAssignableDevice | Where-Object { -not $Gpu.locationPath -or $_.LocationPath -eq $Gpu.locationPath })
}

# Test-CapwinGpu stops the create before anything is made when the host has no free GPU of the kind
# asked for; a VM an interrupted run left keeps what it was given. Free partitions are the
# PartitionCount of the host's partitionable GPUs (Get-VMHostPartitionableGpu) less the partition
# adapters of all its VMs, capwin's or not.
function Test-CapwinGpu {
    param($VM, $Gpu)
    if ($Gpu.mode -eq 'Partition') {
        if ($null -ne $VM -and @(Get-VMGpuPartitionAdapter -VM $VM).Count -gt 0) {
            return
        }
        if (-not (Get-Command -Name 'Get-VMHostPartitionableGpu' -ErrorAction SilentlyContinue)) {
            Stop-Capwin 'NoGPU' ('host {0} has no GPU partitioning (its Hyper-V module lacks Get-VMHostPartitionableGpu)' -f $env:COMPUTERNAME)
        }
        $total = 0
        foreach ($gpu in @(Get-VMHostPartitionableGpu)) {
            $total += $gpu.PartitionCount
        }
        $used = 0
        foreach ($other in @(Get-VM)) {
            $used += @(Get-VMGpuPartitionAdapter -VM $other).Count
        }
        if ($used -ge $total) {
            Stop-Capwin 'NoGPU' ('host {0} has no free GPU partition ({1} of {2} in use)' -f $env:COMPUTERNAME, $used, $total)
        }
        return
    }
    $have = 0
    if ($null -ne $VM) {
        $have = @(Get-VMAssignableDevice -VM $VM).Count
    }
    $free = @(Get-CapwinAssignable $Gpu)
    if ($have + $free.Count -lt $Gpu.count) {
        Stop-Capwin 'NoGPU' ('host {0} has {1} free assignable devices{2}, the VM needs {3}' -f $env:COMPUTERNAME, $free.Count, $(if ($Gpu.locationPath) { ' at ' + $Gpu.locationPath } else { '' }), ($Gpu.count - $have))
    }
}

# Add-CapwinGpu gives the VM its GPU, once. Write-combining and the MMIO space follow Microsoft's
# DDA guide, https://learn.microsoft.com/windows-server/virtualization/hyper-v/deploy/deploying-graphics-devices-using-dda
# (Set-VM -GuestControlledCacheTypes, -LowMemoryMappedIoSpace, -HighMemoryMappedIoSpace; DDA also
# needs -AutomaticStopAction TurnOff, the default, which admission keeps for gpu mode Assign). A partition comes from
# Add-VMGpuPartitionAdapter, with the bounds the spec sets
# (https://learn.microsoft.com/powershell/module/hyper-v/add-vmgpupartitionadapter); devices from
# Add-VMAssignableDevice -LocationPath (https://learn.microsoft.com/powershell/module/hyper-v/add-vmassignabledevice).
function Add-CapwinGpu {
    param($VM, $Gpu)
    $mmio = @{}
    if ($Gpu.lowMmioBytes -gt 0) {
        $mmio.LowMemoryMappedIoSpace = $Gpu.lowMmioBytes
    }
    if ($Gpu.highMmioBytes -gt 0) {
        $mmio.HighMemoryMappedIoSpace = $Gpu.highMmioBytes
    }
    Set-VM -VM $VM -GuestControlledCacheTypes $true @mmio
    if ($Gpu.mode -eq 'Partition') {
        if (@(Get-VMGpuPartitionAdapter -VM $VM).Count -gt 0) {
            return
        }
        # -MinPartitionVRAM, -MaxPartitionVRAM, -OptimalPartitionVRAM, and the same for Encode,
        # Decode and Compute: parameter names from this fixed list, values from the spec.
        $bounds = @{}
        foreach ($kind in 'VRAM', 'Encode', 'Decode', 'Compute') {
            $b = $Gpu.partition.($kind.ToLower())
            if ($b) {
                $bounds["MinPartition$kind"] = [uint64]$b.min
                $bounds["MaxPartition$kind"] = [uint64]$b.max
                $bounds["OptimalPartition$kind"] = [uint64]$b.optimal
            }
        }
        Add-VMGpuPartitionAdapter -VM $VM @bounds
        return
    }
    $need = $Gpu.count - @(Get-VMAssignableDevice -VM $VM).Count
    if ($need -le 0) {
        return
    }
    foreach ($device in @(Get-CapwinAssignable $Gpu | Select-Object -First $need)) {
        Add-VMAssignableDevice -VM $VM -LocationPath $device.LocationPath
    }
}

# Test-CapwinGpuGiven reports whether the VM has the GPU the spec asks for.
function Test-CapwinGpuGiven {
    param($VM, $Gpu)
    if ($Gpu.mode -eq 'Partition') {
        return @(Get-VMGpuPartitionAdapter -VM $VM).Count -ge 1
    }
    return @(Get-VMAssignableDevice -VM $VM).Count -ge $Gpu.count
}

# Register-CapwinClusterRole makes the VM a highly available role of the node's failover cluster,
# named after the machine's UID, so the cluster restarts it on another node when its node fails:
# Add-ClusterVirtualMachineRole -VMId -Name, see
# https://learn.microsoft.com/powershell/module/failoverclusters/add-clustervirtualmachinerole.
# A role an interrupted run registered is kept. The role's AntiAffinityClassNames (a
# StringCollection property of the cluster group, set as in
# https://learn.microsoft.com/windows-server/failover-clustering/cluster-affinity) make the cluster
# keep roles of one class on different nodes; ClusterEnforceAntiAffinity = 1 on the cluster makes
# that a rule rather than a preference, and capwin checks it for Hard, never sets it.
function Register-CapwinClusterRole {
    param($VM, $In)
    $cluster = Assert-CapwinCluster $In
    if ($In.enforceAntiAffinity -and $cluster.ClusterEnforceAntiAffinity -ne 1) {
        Stop-Capwin 'InvalidSpec' ('antiAffinity mode Hard needs failover cluster {0} to enforce anti-affinity: (Get-Cluster).ClusterEnforceAntiAffinity = 1' -f $In.cluster)
    }
    $group = Get-ClusterGroup -Name $In.uid -ErrorAction SilentlyContinue
    if ($null -eq $group) {
        $group = Add-ClusterVirtualMachineRole -VMId $VM.Id -Name $In.uid
    }
    if ($In.antiAffinityClass -and @($group.AntiAffinityClassNames) -notcontains $In.antiAffinityClass) {
        $classes = New-Object System.Collections.Specialized.StringCollection
        $classes.Add($In.antiAffinityClass) | Out-Null
        $group.AntiAffinityClassNames = $classes
    }
}

# Set-CapwinVMSettings sets the checkpoint and automatic start and stop settings with one Set-VM
# (-CheckpointType, -AutomaticCheckpointsEnabled, -AutomaticStartAction, -AutomaticStartDelay in
# seconds, -AutomaticStopAction: https://learn.microsoft.com/powershell/module/hyper-v/set-vm). A
# checkpoint type, start action or delay that $Settings leaves out is not set, so the VM keeps the
# host's default for a new VM. With the stop action Save, the host writes the VM's memory beside
# its configuration when it shuts down: the folder needs that much free space.
function Set-CapwinVMSettings {
    param($VM, $Settings)
    $set = @{ AutomaticCheckpointsEnabled = [bool]$Settings.automaticCheckpoints; AutomaticStopAction = $Settings.automaticStopAction }
    if ($Settings.checkpointType) {
        $set.CheckpointType = $Settings.checkpointType
    }
    if ($Settings.automaticStartAction) {
        $set.AutomaticStartAction = $Settings.automaticStartAction
    }
    if ($Settings.automaticStartDelay -ge 0) {
        $set.AutomaticStartDelay = $Settings.automaticStartDelay
    }
    Set-VM -VM $VM @set
}

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
if ($In.gpu) {
    Test-CapwinGpu $vm $In.gpu
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
foreach ($data in $In.dataDisks) {
    New-CapwinDataDisk (Get-CapwinDataDiskPath $In $data) $data
}
if ($In.configDrive) {
    [IO.File]::WriteAllBytes($iso, [Convert]::FromBase64String($In.configDrive))
}
if ($null -eq $vm) {
    # Generation 2: New-VM attaches -VHDPath at SCSI controller 0, location 0.
    $vm = New-VM -Name $In.name -Generation 2 -VHDPath $disk -Path $dir -MemoryStartupBytes $In.memoryBytes
} elseif (@(Get-VMHardDiskDrive -VM $vm | Where-Object { $_.Path -eq $disk }).Count -eq 0) {
    Add-VMHardDiskDrive -VM $vm -ControllerType SCSI -ControllerNumber 0 -ControllerLocation 0 -Path $disk
}
$notes = "capwin-uid:{0}`ncapwin-owner:{1}" -f $In.uid, $In.owner
Set-VM -VM $vm -Notes $notes -ProcessorCount $In.processors -MemoryStartupBytes $In.memoryBytes
Set-CapwinVMSettings $vm $In.settings
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
if ($In.vtpm) {
    Enable-CapwinTpm $vm
}
Set-VMProcessor -VM $vm -ExposeVirtualizationExtensions ([bool]$In.nestedVirtualization)
if ($In.gpu) {
    Add-CapwinGpu $vm $In.gpu
}
Get-VMNetworkAdapter -VM $vm | Remove-VMNetworkAdapter
foreach ($nic in $In.nics) {
    $adapter = Add-VMNetworkAdapter -VM $vm -SwitchName $nic.switch -StaticMacAddress $nic.mac -Passthru
    if ($nic.vlanId -gt 0) {
        Set-VMNetworkAdapterVlan -VMNetworkAdapter $adapter -Access -VlanId $nic.vlanId
    }
}
# The config drive comes off first: an interrupted run may have left it where a data disk goes.
Get-VMDvdDrive -VM $vm | Remove-VMDvdDrive
foreach ($data in $In.dataDisks) {
    $path = Get-CapwinDataDiskPath $In $data
    if ($null -eq (Get-CapwinDrive $vm $path $data.location)) {
        Add-VMHardDiskDrive -VM $vm -ControllerType SCSI -ControllerNumber 0 -ControllerLocation $data.location -Path $path
    }
}
if ($In.configDrive) {
    # Add-VMDvdDrive takes the first free location unless given one; the rule above fixes it.
    Add-VMDvdDrive -VM $vm -ControllerNumber 0 -ControllerLocation $In.configDriveLocation -Path $iso
}
Set-VMFirmware -VM $vm -FirstBootDevice (Get-VMHardDiskDrive -VM $vm | Where-Object { $_.Path -eq $disk } | Select-Object -First 1)
# Check what was set before the VM is marked complete.
$want = @(foreach ($nic in $In.nics) { $nic.mac }) -join ','
$have = @(Get-VMNetworkAdapter -VM $vm | ForEach-Object { $_.MacAddress }) -join ','
if ($have -ne $want) {
    Stop-Capwin 'Failed' ('VM {0} has network adapters {1} after create, want {2}' -f $vm.Id, $have, $want)
}
foreach ($data in $In.dataDisks) {
    $path = Get-CapwinDataDiskPath $In $data
    if ($null -eq (Get-CapwinDrive $vm $path $data.location)) {
        Stop-Capwin 'Failed' ('VM {0} has no data disk {1} at SCSI 0:{2} after create' -f $vm.Id, $path, $data.location)
    }
}
if ($In.gpu -and -not (Test-CapwinGpuGiven $vm $In.gpu)) {
    Stop-Capwin 'Failed' ('VM {0} has no GPU ({1}) after create' -f $vm.Id, $In.gpu.mode)
}
if ($In.vtpm -and -not (Get-VMSecurity -VM $vm).TpmEnabled) {
    Stop-Capwin 'Failed' ('VM {0} has no TPM after create' -f $vm.Id)
}
$dvd = @(Get-VMDvdDrive -VM $vm | Where-Object { $_.Path -eq $iso -and $_.ControllerNumber -eq 0 -and $_.ControllerLocation -eq $In.configDriveLocation })
if ($In.configDrive -and $dvd.Count -ne 1) {
    Stop-Capwin 'Failed' ('VM {0} has no config drive {1} at SCSI 0:{2} after create' -f $vm.Id, $iso, $In.configDriveLocation)
}
# The role comes before the complete line: a VM marked complete is never created again.
if ($In.cluster) {
    Register-CapwinClusterRole $vm $In
}
Set-VM -VM $vm -Notes ("{0}`n{1}" -f $notes, $complete)
return Get-CapwinView (Get-VM -Id $vm.Id)
