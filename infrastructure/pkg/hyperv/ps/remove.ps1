# remove.ps1 deletes a machine's VM, its differencing disk and its folder (config drive). What is
# already gone counts as removed.
param($In)
$vm = Find-CapwinVM $In
if ($null -ne $vm) {
    if ($vm.State -ne 'Off') {
        Stop-VM -VM $vm -TurnOff -Force
    }
    Remove-VM -VM $vm -Force
}
foreach ($path in @((Get-CapwinDiskPath $In), (Get-CapwinVMDir $In))) {
    if (Test-Path -LiteralPath $path) {
        Remove-Item -LiteralPath $path -Recurse -Force
    }
}
return @{ removed = $true }
