# power.ps1 starts a VM, turns it off, or asks the guest to shut down. Start and turn-off return the
# host's job id at once (job.ps1 follows it); nothing waits here.
param($In)
$id = ([guid]$In.id).ToString()
if ($In.action -eq 'shutdown') {
    $component = Get-CimInstance -Namespace 'root\virtualization\v2' -ClassName 'Msvm_ShutdownComponent' -Filter ("SystemName='{0}'" -f $id)
    if ($null -eq $component) {
        Stop-Capwin 'GuestUnavailable' 'the guest shutdown service is not running'
    }
    Invoke-CimMethod -InputObject $component -MethodName 'InitiateShutdown' -Arguments @{ Force = $true; Reason = 'capwin: machine deleted' } | Out-Null
    return @{ job = '' }
}
$states = @{ start = 2; off = 3 }
if (-not $states.ContainsKey($In.action)) {
    Stop-Capwin 'Failed' ('unknown power action {0}' -f $In.action)
}
$system = Get-CimInstance -Namespace 'root\virtualization\v2' -ClassName 'Msvm_ComputerSystem' -Filter ("Name='{0}'" -f $id)
if ($null -eq $system) {
    Stop-Capwin 'NotFound' ('VM {0} does not exist' -f $id)
}
$r = Invoke-CimMethod -InputObject $system -MethodName 'RequestStateChange' -Arguments @{ RequestedState = [uint16]$states[$In.action] }
if ($r.ReturnValue -eq 4096) {
    return @{ job = [string]$r.Job.InstanceID }
}
if ($r.ReturnValue -eq 0 -or $r.ReturnValue -eq 32775) {
    return @{ job = '' }
}
Stop-Capwin 'Failed' ('RequestStateChange returned {0}' -f $r.ReturnValue)
