# The CNI plugins the -flannel flavors need on the host (settings.cniPlugins: name, url, sha256 of
# each, for example flannel.exe, sdnoverlay.exe and host-local.exe) into C:\opt\cni\bin. The Calico
# flavors install their own; an empty list installs nothing.
. 'C:\Windows\Temp\capwin-image\common.ps1'
$settings = Get-CapwinImageSettings
$dir = 'C:\opt\cni\bin'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
foreach ($plugin in $settings.cniPlugins) {
    Write-CapwinStep "CNI plugin $($plugin.name)"
    Get-CapwinFile -Source $plugin.url -Checksum $plugin.sha256 -Path (Join-Path $dir $plugin.name)
}
