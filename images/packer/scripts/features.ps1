# Windows features of a capwin node: Containers, and Hyper-V for Hyper-V isolated pods
# (settings.hypervIsolation). Packer's windows-restart provisioner restarts afterwards.
. 'C:\Windows\Temp\capwin-image\common.ps1'
$settings = Get-CapwinImageSettings
$features = @('Containers')
if ($settings.hypervIsolation) { $features += 'Hyper-V' }
foreach ($name in $features) {
    Write-CapwinStep "installing the Windows feature $name"
    $result = Install-WindowsFeature -Name $name
    if (-not $result.Success) { throw "Install-WindowsFeature $name did not succeed" }
}
