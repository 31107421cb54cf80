# eject.ps1 removes the config drive (it holds the join token) from the VM and deletes it.
param($In)
$iso = Join-Path (Get-CapwinVMDir $In) 'cidata.iso'
$vm = Find-CapwinVM $In
if ($null -ne $vm) {
    # Ejecting the media works while the VM runs; the empty drive stays.
    Get-VMDvdDrive -VM $vm | Where-Object { $_.Path -eq $iso } | Set-VMDvdDrive -Path $null
}
if (Test-Path -LiteralPath $iso) {
    Remove-Item -LiteralPath $iso -Force
}
return @{ ejected = $true }
