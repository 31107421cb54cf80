# The Kubernetes node binaries of settings.kubernetes.version into C:\k (capwin's default
# binaries.directory, binaries.source Prebaked): kubelet.exe, kubeadm.exe, kube-proxy.exe and
# kube-log-runner.exe, each checked against its SHA-256.
. 'C:\Windows\Temp\capwin-image\common.ps1'
$settings = Get-CapwinImageSettings
$dir = 'C:\k'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
foreach ($binary in $settings.kubernetes.binaries) {
    Write-CapwinStep "$($binary.name) $($settings.kubernetes.version)"
    Get-CapwinFile -Source $binary.url -Checksum $binary.sha256 -Path (Join-Path $dir $binary.name)
}
$machinePath = [Environment]::GetEnvironmentVariable('Path', 'Machine')
if (($machinePath -split ';') -notcontains $dir) {
    [Environment]::SetEnvironmentVariable('Path', "$machinePath;$dir", 'Machine')
}
$version = & (Join-Path $dir 'kubelet.exe') --version
if ($LASTEXITCODE -ne 0 -or $version -notmatch [regex]::Escape($settings.kubernetes.version)) {
    throw "kubelet.exe says '$version', want $($settings.kubernetes.version)"
}
