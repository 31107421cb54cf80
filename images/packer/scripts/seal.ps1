# Packer's shutdown_command: removes what the build added for Packer (first-logon.ps1's WinRM
# listener, firewall rule and certificate, the settings and downloads), then starts sysprep with
# cloudbase-init's Unattend.xml, which generalizes the image and shuts it down. At the clone's
# first boot, cloudbase-init's specialize pass (cloudbase-init-unattend.conf) names the computer.
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$unattend = Join-Path $env:ProgramFiles 'Cloudbase Solutions\Cloudbase-Init\conf\Unattend.xml'
if (-not (Test-Path -LiteralPath $unattend)) { throw "cloudbase-init's $unattend is missing" }
Remove-Item -LiteralPath 'C:\Windows\Temp\capwin-image' -Recurse -Force
Remove-NetFirewallRule -Name capwin-image-winrm -ErrorAction SilentlyContinue
Get-ChildItem -Path Cert:\LocalMachine\My | Where-Object { $_.FriendlyName -eq 'capwin-image-winrm' } | Remove-Item
Set-Item -Path WSMan:\localhost\Service\Auth\Basic -Value $false
$sysprep = Join-Path $env:SystemRoot 'System32\Sysprep\sysprep.exe'
Start-Process -FilePath $sysprep -ArgumentList @('/generalize', '/oobe', '/shutdown', '/quiet', "/unattend:`"$unattend`"")
# The HTTPS listener goes last: this command's own connection runs over it.
Get-ChildItem -Path WSMan:\localhost\Listener | Where-Object { $_.Keys -contains 'Transport=HTTPS' } | Remove-Item -Recurse -Force
