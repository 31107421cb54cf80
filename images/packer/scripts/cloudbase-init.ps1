# cloudbase-init from its MSI (settings.cloudbaseInit: url, sha256), running as LocalSystem, with
# capwin's configuration files for this hypervisor (uploaded next to this script) in place of the
# installer's. sysprep (Packer's shutdown_command) then runs its Unattend.xml.
. 'C:\Windows\Temp\capwin-image\common.ps1'
$settings = Get-CapwinImageSettings
$msi = Join-Path $CapwinImageDir 'CloudbaseInitSetup.msi'
Write-CapwinStep "cloudbase-init $($settings.cloudbaseInit.version)"
Get-CapwinFile -Source $settings.cloudbaseInit.url -Checksum $settings.cloudbaseInit.sha256 -Path $msi
$log = Join-Path $CapwinImageDir 'cloudbase-init-msi.log'
$install = Start-Process -FilePath msiexec.exe -Wait -PassThru -ArgumentList @(
    '/i', "`"$msi`"", '/qn', '/l*v', "`"$log`"", 'RUN_SERVICE_AS_LOCAL_SYSTEM=1')
if ($install.ExitCode -ne 0) { throw "msiexec exited with $($install.ExitCode) (log: $log)" }
$conf = Join-Path $env:ProgramFiles 'Cloudbase Solutions\Cloudbase-Init\conf'
foreach ($file in 'cloudbase-init.conf', 'cloudbase-init-unattend.conf') {
    Copy-Item -LiteralPath (Join-Path $CapwinImageDir $file) -Destination (Join-Path $conf $file) -Force
}
