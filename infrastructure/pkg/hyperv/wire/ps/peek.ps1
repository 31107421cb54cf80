# peek.ps1 reads, for each VM id of $In.ids that still exists, what changes while its machine
# waits for the guest: state, heartbeat, addresses and capwin's KVP items. One operation for all
# of a host's machines in flight (the guest watch); a VM that is gone is left out.
param($In)
$vms = @()
foreach ($id in @($In.ids)) {
    $vm = Get-VM -Id ([guid]$id) -ErrorAction SilentlyContinue
    if ($null -eq $vm) {
        continue
    }
    $ips = @(Get-VMNetworkAdapter -VM $vm | ForEach-Object { @($_.IPAddresses) })
    $vms += @{
        id        = $vm.Id.ToString()
        state     = $vm.State.ToString()
        heartbeat = ("$($vm.Heartbeat)" -like 'Ok*')
        ips       = $ips
        kvp       = (Get-CapwinKvp $vm)
    }
}
return @{ vms = $vms }
