# capwin host library: loaded before every operation script. Operation scripts are static; their
# only input is the JSON document $In, their only output one JSON document.

# Stop-Capwin ends the operation with a typed error that capwin maps to a Go error kind.
function Stop-Capwin {
    param([string]$Kind, [string]$Message)
    throw [pscustomobject]@{ capwinKind = $Kind; message = $Message }
}

# Write-CapwinResult writes the result as base64 of UTF-8 JSON on one marked line: the console's
# code page cannot garble it, and other output cannot be mistaken for it: the line carries the
# operation's nonce ($CapwinNonce, set by the runner), which no guest or module has seen.
function Write-CapwinResult {
    param($Document)
    $json = $Document | ConvertTo-Json -Depth 8 -Compress
    [Console]::Out.WriteLine('capwin-result:' + $CapwinNonce + ':' + [Convert]::ToBase64String([Text.Encoding]::UTF8.GetBytes($json)))
}

function Get-CapwinErrorKind {
    param($Record)
    $target = $Record.TargetObject
    if ($null -ne $target -and $null -ne $target.PSObject.Properties['capwinKind']) {
        return $target.capwinKind
    }
    $hresult = $Record.Exception.HResult
    if ($hresult -eq -2147024784 -or $hresult -eq -2147024857) {
        return 'DiskFull'
    }
    if ($hresult -eq -2147024891 -or $Record.Exception -is [UnauthorizedAccessException]) {
        return 'AccessDenied'
    }
    if ($Record.CategoryInfo.Category -eq 'ObjectNotFound') {
        return 'NotFound'
    }
    return 'Failed'
}

function Invoke-CapwinOperation {
    param([ScriptBlock]$Operation, $In)
    try {
        $result = & $Operation $In
        Write-CapwinResult @{ ok = $true; result = $result }
        exit 0
    } catch {
        $message = "$_"
        if ($null -ne $_.TargetObject -and $null -ne $_.TargetObject.PSObject.Properties['capwinKind']) {
            $message = $_.TargetObject.message
        }
        Write-CapwinResult @{ ok = $false; error = @{ kind = (Get-CapwinErrorKind $_); message = $message } }
        exit 1
    }
}

function Get-CapwinDiskPath {
    param($In)
    return Join-Path $In.diskPath ($In.uid + '.vhdx')
}

# Get-CapwinVMDir is the VM's own folder (configuration, config drive, data disks).
function Get-CapwinVMDir {
    param($In)
    return Join-Path $In.vmPath $In.uid
}

# Get-CapwinDataDiskPath is a data disk's file in the VM's folder, which remove.ps1 deletes.
function Get-CapwinDataDiskPath {
    param($In, $Disk)
    return Join-Path (Get-CapwinVMDir $In) ($Disk.name + '.vhdx')
}

# Find-CapwinVM finds a machine's VM by id, else by the capwin-uid line of its notes, else by its
# differencing disk (a create stopped before the notes were written).
function Find-CapwinVM {
    param($In)
    if ($In.id) {
        $vm = Get-VM -Id ([guid]$In.id) -ErrorAction SilentlyContinue
        if ($null -ne $vm) {
            return $vm
        }
    }
    $tag = 'capwin-uid:' + $In.uid
    $disk = Get-CapwinDiskPath $In
    foreach ($vm in @(Get-VM)) {
        if ("$($vm.Notes)".Contains($tag)) {
            return $vm
        }
    }
    foreach ($vm in @(Get-VM)) {
        if (@(Get-VMHardDiskDrive -VM $vm | Where-Object { $_.Path -eq $disk }).Count -gt 0) {
            return $vm
        }
    }
    return $null
}

# Get-CapwinKvp returns the guest's KVP items whose names start with capwin.
function Get-CapwinKvp {
    param($VM)
    $items = @{}
    $filter = "SystemName='{0}'" -f ([guid]$VM.Id).ToString()
    $kvp = Get-CimInstance -Namespace 'root\virtualization\v2' -ClassName 'Msvm_KvpExchangeComponent' -Filter $filter
    if ($null -eq $kvp -or $null -eq $kvp.GuestExchangeItems) {
        return $items
    }
    foreach ($item in $kvp.GuestExchangeItems) {
        $xml = [xml]$item
        $name = $xml.SelectSingleNode("/INSTANCE/PROPERTY[@NAME='Name']/VALUE").InnerText
        if ($name.StartsWith('capwin.')) {
            $items[$name] = $xml.SelectSingleNode("/INSTANCE/PROPERTY[@NAME='Data']/VALUE").InnerText
        }
    }
    return $items
}

# Get-CapwinView is everything capwin observes about a VM, read in one operation.
function Get-CapwinView {
    param($VM)
    $nics = @(Get-VMNetworkAdapter -VM $VM | ForEach-Object { @{ mac = $_.MacAddress; switch = "$($_.SwitchName)"; ips = @($_.IPAddresses) } })
    $dvds = @(Get-VMDvdDrive -VM $VM | Where-Object { $_.Path } | ForEach-Object { $_.Path })
    $disks = @(Get-VMHardDiskDrive -VM $VM | ForEach-Object { @{ path = $_.Path; controller = "$($_.ControllerType)"; controllerNumber = $_.ControllerNumber; location = $_.ControllerLocation } })
    return @{
        id        = $VM.Id.ToString()
        name      = $VM.Name
        state     = $VM.State.ToString()
        notes     = "$($VM.Notes)"
        heartbeat = ("$($VM.Heartbeat)" -like 'Ok*')
        nics      = $nics
        dvds      = $dvds
        disks     = $disks
        kvp       = (Get-CapwinKvp $VM)
        # A VM found by a reference may be someone's generation 1 VM, which has no UEFI settings.
        tpm       = ($VM.Generation -eq 2 -and [bool](Get-VMSecurity -VM $VM).TpmEnabled)
        secureBoot = ($VM.Generation -eq 2 -and "$((Get-VMFirmware -VM $VM).SecureBoot)" -eq 'On')
    }
}

# Assert-CapwinCluster stops unless this host is a node of the failover cluster $In.cluster.
# capwin runs the FailoverClusters cmdlets on a node against its own cluster (Get-Cluster and the
# others without -Cluster): naming the cluster would make the node log on to the cluster's network
# name with the WinRM login, a second hop that NTLM does not allow.
function Assert-CapwinCluster {
    param($In)
    $cluster = Get-Cluster -ErrorAction SilentlyContinue
    if ($null -eq $cluster -or "$($cluster.Name)" -ne $In.cluster) {
        Stop-Capwin 'InvalidSpec' ('host {0} is not a node of failover cluster {1} (its cluster: {2})' -f $env:COMPUTERNAME, $In.cluster, "$($cluster.Name)")
    }
    return $cluster
}
