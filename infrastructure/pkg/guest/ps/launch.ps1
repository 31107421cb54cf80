# capwin guest launcher. This file is static: every value comes from $CapwinLaunch, the base64
# JSON document assigned on the script's first line, followed by the shared network.ps1
# (internal/guestos: Set-Network) and this file. capwin copies it, with the bootstrap script, into a
# guest that has no cloudbase-init and starts it through the hypervisor's guest agent. It does what
# cloudbase-init would have done from the instance metadata (addresses, routes, DNS servers and
# search list, MTU, computer name) and then runs the bootstrap script. It is safe to run again.
Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

$Launch = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($CapwinLaunch)) | ConvertFrom-Json
$PowerShell = Join-Path $env:SystemRoot 'System32\WindowsPowerShell\v1.0\powershell.exe'

function Write-Log {
    param([string]$Message)
    $line = '{0} [launch] {1}' -f (Get-Date).ToUniversalTime().ToString('o'), $Message
    Add-Content -Path $Launch.logFile -Value $line -Encoding UTF8
}

# Send-Status reports like the bootstrap script does (step "launch"), so a failure here shows on
# the machine's BootstrapSucceeded condition.
function Send-Status {
    param([string]$Phase, [string]$Message)
    if ($Message.Length -gt 256) {
        $Message = $Message.Substring(0, 256)
    }
    $json = [ordered]@{ step = 'launch'; state = $Phase; message = $Message; logTail = '' } | ConvertTo-Json -Compress
    try {
        $rpctool = Join-Path $env:ProgramFiles 'VMware\VMware Tools\rpctool.exe'
        if ($Launch.status.guestinfoKey -and (Test-Path $rpctool)) {
            # Windows PowerShell 5.1 does not escape quotes for native programs (MSVCRT rules).
            $arg = 'info-set {0} {1}' -f $Launch.status.guestinfoKey, $json
            $arg = [regex]::Replace($arg, '(\\*)"', { param($m) $m.Groups[1].Value + $m.Groups[1].Value + '\"' })
            & $rpctool $arg | Out-Null
        }
        if ($Launch.status.kvpKey -and (Test-Path $Launch.status.kvpKey)) {
            Set-ItemProperty -Path $Launch.status.kvpKey -Name $Launch.status.kvpValue -Value $json
        }
    } catch {
        Write-Log "status report failed: $_"
    }
}

# Rename-Guest gives the guest its computer name; the bootstrap script then runs from a startup
# task after the restart (the bootstrap removes that task when it finishes).
function Rename-Guest {
    Write-Log "renaming the computer from $env:COMPUTERNAME to $($Launch.computerName); the bootstrap runs after the restart"
    $arguments = '-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "{0}"' -f $Launch.bootstrapPath
    $action = New-ScheduledTaskAction -Execute $PowerShell -Argument $arguments
    $trigger = New-ScheduledTaskTrigger -AtStartup
    Register-ScheduledTask -TaskName $Launch.taskName -Action $action -Trigger $trigger -User 'SYSTEM' -RunLevel Highest -Force | Out-Null
    Rename-Computer -NewName $Launch.computerName -Force
    Send-Status 'Rebooting' "computer renamed to $($Launch.computerName)"
    Restart-Computer -Force
}

New-Item -ItemType Directory -Force -Path (Split-Path -Parent $Launch.logFile) | Out-Null
try {
    # The bootstrap script beside this one holds the join token: only SYSTEM and Administrators
    # may read the directory (the bootstrap deletes its file when it finishes).
    $dir = Split-Path -Parent $Launch.bootstrapPath
    & icacls.exe $dir '/inheritance:r' '/grant:r' '*S-1-5-18:(OI)(CI)F' '/grant:r' '*S-1-5-32-544:(OI)(CI)F' | Out-Null
    if ($LASTEXITCODE -ne 0) {
        throw "icacls on $dir exited with code $LASTEXITCODE"
    }
    Set-Network $Launch
    if ($env:COMPUTERNAME -ne $Launch.computerName) {
        Rename-Guest
        exit 0
    }
} catch {
    Write-Log "failed: $_"
    Send-Status 'Failed' "$_"
    exit 1
}
Write-Log 'running the bootstrap script'
& $PowerShell -NoProfile -NonInteractive -ExecutionPolicy Bypass -File $Launch.bootstrapPath
exit $LASTEXITCODE
