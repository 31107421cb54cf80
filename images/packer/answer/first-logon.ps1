# The build VM's first logon (the answer file runs it from its CD): VMware Tools from the Tools ISO
# when one is attached (vSphere), then a WinRM HTTPS listener with a self-signed certificate for
# Packer. seal.ps1 removes the listener, its firewall rule and the certificate before sysprep.
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$log = 'C:\Windows\Temp\capwin-first-logon.log'
Start-Transcript -LiteralPath $log -Append | Out-Null

$tools = Get-PSDrive -PSProvider FileSystem | ForEach-Object { Join-Path $_.Root 'setup64.exe' } |
    Where-Object { Test-Path -LiteralPath $_ } | Select-Object -First 1
if ($tools) {
    $install = Start-Process -FilePath $tools -Wait -PassThru -ArgumentList '/s /v "/qn REBOOT=R"'
    if ($install.ExitCode -notin 0, 3010) { throw "VMware Tools setup exited with $($install.ExitCode)" }
}

Get-NetConnectionProfile | Where-Object { $_.NetworkCategory -eq 'Public' } |
    Set-NetConnectionProfile -NetworkCategory Private
$cert = New-SelfSignedCertificate -DnsName $env:COMPUTERNAME -CertStoreLocation Cert:\LocalMachine\My -FriendlyName 'capwin-image-winrm'
Enable-PSRemoting -SkipNetworkProfileCheck -Force | Out-Null
New-Item -Path WSMan:\localhost\Listener -Transport HTTPS -Address * -CertificateThumbPrint $cert.Thumbprint -Force | Out-Null
Set-Item -Path WSMan:\localhost\Service\Auth\Basic -Value $true
New-NetFirewallRule -Name capwin-image-winrm -DisplayName 'capwin image build: WinRM over HTTPS' -Direction Inbound -Protocol TCP -LocalPort 5986 -Action Allow | Out-Null
Stop-Transcript | Out-Null
