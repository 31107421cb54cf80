# find.ps1 returns a machine's VM as capwin observes it, or found = false.
param($In)
$vm = Find-CapwinVM $In
if ($null -eq $vm) {
    return @{ found = $false }
}
return @{ found = $true; vm = (Get-CapwinView $vm) }
