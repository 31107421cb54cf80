# capwin log rotation, run by the scheduled task the bootstrap registers (Step-Containerd). This
# file is static: what it rotates comes from rotate-logs.json next to it. It rotates the log files
# of services that keep them open and never rotate them themselves (containerd's --log-file): a
# file at or past maxBytes is copied to <base>-<yyyyMMdd-HHmmss><ext> and emptied in place, as
# logrotate's copytruncate does (the service appends, so it goes on at the new end); rotated
# copies older than maxAgeHours are removed.
Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Stop'

$Config = Get-Content -Raw -Path (Join-Path $PSScriptRoot 'rotate-logs.json') | ConvertFrom-Json

foreach ($path in @($Config.files)) {
    $folder = Split-Path -Parent $path
    $base = [IO.Path]::GetFileNameWithoutExtension($path)
    $ext = [IO.Path]::GetExtension($path)
    if ((Test-Path -LiteralPath $path) -and ((Get-Item -LiteralPath $path).Length -ge $Config.maxBytes)) {
        $stamp = (Get-Date).ToUniversalTime().ToString('yyyyMMdd-HHmmss')
        Copy-Item -LiteralPath $path -Destination (Join-Path $folder ('{0}-{1}{2}' -f $base, $stamp, $ext)) -Force
        # The service holds the file open with read and write sharing: empty it through a handle
        # that shares both too.
        $stream = [IO.File]::Open($path, [IO.FileMode]::Open, [IO.FileAccess]::Write, [IO.FileShare]::ReadWrite)
        try {
            $stream.SetLength(0)
        } finally {
            $stream.Dispose()
        }
    }
    $cutoff = (Get-Date).AddHours(-$Config.maxAgeHours)
    Get-ChildItem -LiteralPath $folder -File -Filter ('{0}-*{1}' -f $base, $ext) -ErrorAction SilentlyContinue |
        Where-Object { $_.Name -match ('^' + [regex]::Escape($base) + '-\d{8}-\d{6}' + [regex]::Escape($ext) + '$') -and $_.LastWriteTime -lt $cutoff } |
        Remove-Item -Force
}
