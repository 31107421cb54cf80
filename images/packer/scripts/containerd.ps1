# containerd from its release archive (settings.containerd: url, sha256) into
# C:\Program Files\containerd, registered as the containerd service. capwin's bootstrap writes
# config.toml on each node (docs/bootstrap.md), so the image keeps none.
. 'C:\Windows\Temp\capwin-image\common.ps1'
$settings = Get-CapwinImageSettings
$dir = Join-Path $env:ProgramFiles 'containerd'
$archive = Join-Path $CapwinImageDir 'containerd.tar.gz'
Write-CapwinStep "containerd $($settings.containerd.version)"
Get-CapwinFile -Source $settings.containerd.url -Checksum $settings.containerd.sha256 -Path $archive
$unpacked = Join-Path $CapwinImageDir 'containerd'
New-Item -ItemType Directory -Force -Path $unpacked, $dir | Out-Null
& tar.exe -xzf $archive -C $unpacked
if ($LASTEXITCODE -ne 0) { throw "tar.exe could not unpack $archive" }
Copy-Item -Path (Join-Path $unpacked 'bin\*') -Destination $dir -Force
$machinePath = [Environment]::GetEnvironmentVariable('Path', 'Machine')
if (($machinePath -split ';') -notcontains $dir) {
    [Environment]::SetEnvironmentVariable('Path', "$machinePath;$dir", 'Machine')
}
if (-not (Get-Service -Name containerd -ErrorAction SilentlyContinue)) {
    & (Join-Path $dir 'containerd.exe') --register-service
    if ($LASTEXITCODE -ne 0) { throw 'containerd --register-service failed' }
}
Set-Service -Name containerd -StartupType Automatic
Start-Service -Name containerd
