# Pulls settings.images (the pause image and the addons' images: kube-proxy for Windows, flanneld,
# ...) into containerd's k8s.io namespace, where the kubelet finds them, so a new node's first pods
# do not wait for multi-gigabyte pulls. Each pull gets settings.pullTimeoutMinutes at most.
. 'C:\Windows\Temp\capwin-image\common.ps1'
$settings = Get-CapwinImageSettings
$ctr = Join-Path $env:ProgramFiles 'containerd\ctr.exe'
foreach ($image in $settings.images) {
    Write-CapwinStep "pulling $image"
    $job = Start-Job -ScriptBlock {
        param($ctr, $image)
        & $ctr -n k8s.io images pull $image 2>&1
        if ($LASTEXITCODE -ne 0) { throw "ctr images pull $image exited with $LASTEXITCODE" }
    } -ArgumentList $ctr, $image
    if (-not (Wait-Job -Job $job -Timeout (60 * $settings.pullTimeoutMinutes))) {
        Stop-Job -Job $job
        throw "pulling $image took more than $($settings.pullTimeoutMinutes) minutes"
    }
    Receive-Job -Job $job
    Remove-Job -Job $job
}
