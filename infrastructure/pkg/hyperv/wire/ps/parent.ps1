# parent.ps1 makes sure the host holds a verified copy of a parent disk source
# (spec.parentDiskSource) at <diskPath>\parents\<sha256>.vhdx, and reports ready (with its path),
# copying, or failed. A file of that name is always complete and verified: the copy is written
# under a temporary name in <sha256>.partial and renamed only after its SHA-256 matched.
#
# The copy itself runs in a scheduled task as LocalSystem, never in this WinRM session:
# - it takes minutes, and an operation must answer within seconds (no reconcile waits for it);
#   capwin asks again on the next reconcile;
# - WinRM ends the processes of a session when the session ends;
# - a NTLM WinRM session holds no credential the host can pass on to a file server (the second
#   hop), whereas LocalSystem reaches a share as the host's computer account (DOMAIN\HOST$).
# The task's name is the lock: two creates asking for the same parent at once register one task
# (Register-ScheduledTask fails for the second, which then reports copying). Whatever interleaves
# (a run that finds the task registered but not yet started takes it for an ended one and starts
# its own), the final name only ever holds a verified file: temporary names are unique, and
# Move-Item never replaces a file.
param($In)

# Invoke-CapwinFetch is the task's script: its body runs as powershell.exe -EncodedCommand, in the
# <sha256>.partial folder, and reads the source's url from request.json there (data, never code).
# Where it writes follows from that folder alone (never from the request, which LocalSystem must
# not trust with a path): the copy to <sha256>.vhdx beside it, a failure to <sha256>.failed. It
# downloads an https URL with Invoke-WebRequest -OutFile
# (https://learn.microsoft.com/powershell/module/microsoft.powershell.utility/invoke-webrequest) or
# copies a UNC path with Copy-Item, into a temporary file of a unique name, hashes it with
# Get-FileHash -Algorithm SHA256
# (https://learn.microsoft.com/powershell/module/microsoft.powershell.utility/get-filehash), and
# renames it into place (Move-Item on one volume is a rename). A hash that differs, or a failed
# copy, leaves <sha256>.failed with kind and message, and no file.
function Invoke-CapwinFetch {
    $ErrorActionPreference = 'Stop'
    $ProgressPreference = 'SilentlyContinue'
    $work = (Get-Location).Path
    $sha = (Split-Path -Leaf $work) -replace '\.partial$', ''
    $cache = Split-Path -Parent $work
    $file = Join-Path $cache ($sha + '.vhdx')
    $failed = Join-Path $cache ($sha + '.failed')
    $temp = Join-Path $work ([guid]::NewGuid().ToString() + '.vhdx')
    $failure = $null
    try {
        if ($sha -notmatch '^[0-9a-f]{64}$') {
            throw ('{0} is not a folder of a parent disk copy' -f $work)
        }
        $url = "$((Get-Content -LiteralPath (Join-Path $work 'request.json') -Raw | ConvertFrom-Json).url)"
        if ($url.StartsWith('https://')) {
            # Windows PowerShell 5.1 offers TLS 1.2 only when asked on older .NET defaults.
            [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
            Invoke-WebRequest -Uri $url -OutFile $temp -UseBasicParsing
        } elseif ($url -match '^\\\\[^\\?.][^\\]*\\[^\\]+\\') {
            Copy-Item -LiteralPath $url -Destination $temp
        } else {
            throw ('{0} is neither an https URL nor a UNC path' -f $url)
        }
        $hash = (Get-FileHash -LiteralPath $temp -Algorithm SHA256).Hash.ToLowerInvariant()
        if ($hash -ne $sha) {
            Remove-Item -LiteralPath $temp -Force
            # The file's own hash is not told: it would let a tenant learn the hash of any file
            # the host's computer account can read.
            $failure = @{ kind = 'InvalidSpec'; message = ('{0} does not match the pinned SHA-256 {1} (parentDiskSource.sha256); the copy was deleted' -f $url, $sha) }
        } elseif (Test-Path -LiteralPath $file) {
            Remove-Item -LiteralPath $temp -Force
        } else {
            Move-Item -LiteralPath $temp -Destination $file
        }
    } catch {
        Remove-Item -LiteralPath $temp -Force -ErrorAction SilentlyContinue
        $failure = @{ kind = 'Failed'; message = ('copy {0} as the host computer account: {1}' -f $url, $_) }
    }
    if ($null -ne $failure) {
        $failure | ConvertTo-Json -Compress | Set-Content -LiteralPath $failed -Encoding UTF8
    }
}

# Start-CapwinFetch writes the request and registers and starts the task (New-ScheduledTaskAction,
# New-ScheduledTaskPrincipal with the LocalSystem SID, Register-ScheduledTask, Start-ScheduledTask:
# https://learn.microsoft.com/powershell/module/scheduledtasks/register-scheduledtask). Only a
# task registered by another run at the same time is taken as copying; any other failure is raised.
function Start-CapwinFetch {
    param([string]$Task, [string]$Work, $Request)
    if (Test-Path -LiteralPath $Work) {
        # An interrupted task (a host restart) may have left a partial file.
        Remove-Item -LiteralPath $Work -Recurse -Force
    }
    New-Item -ItemType Directory -Force -Path $Work | Out-Null
    $Request | ConvertTo-Json -Compress | Set-Content -LiteralPath (Join-Path $Work 'request.json') -Encoding UTF8
    $body = [Convert]::ToBase64String([Text.Encoding]::Unicode.GetBytes(${function:Invoke-CapwinFetch}.ToString()))
    $action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument ('-NoProfile -NonInteractive -ExecutionPolicy Bypass -EncodedCommand ' + $body) -WorkingDirectory $Work
    $principal = New-ScheduledTaskPrincipal -UserId 'S-1-5-18' -LogonType ServiceAccount -RunLevel Highest
    try {
        Register-ScheduledTask -TaskName $Task -TaskPath '\capwin\' -Action $action -Principal $principal | Out-Null
    } catch {
        if ($null -ne (Get-ScheduledTask -TaskName $Task -TaskPath '\capwin\' -ErrorAction SilentlyContinue)) {
            return
        }
        throw
    }
    Start-ScheduledTask -TaskName $Task -TaskPath '\capwin\'
}

$sha = "$($In.sha256)".ToLowerInvariant()
if ($sha -notmatch '^[0-9a-f]{64}$') {
    Stop-Capwin 'InvalidSpec' ('sha256 {0} is not 64 hexadecimal digits' -f $In.sha256)
}
$cache = Join-Path $In.diskPath 'parents'
$file = Join-Path $cache ($sha + '.vhdx')
$work = Join-Path $cache ($sha + '.partial')
$failed = Join-Path $cache ($sha + '.failed')
$task = 'parent-' + $sha
New-Item -ItemType Directory -Force -Path $cache | Out-Null
$registered = Get-ScheduledTask -TaskName $task -TaskPath '\capwin\' -ErrorAction SilentlyContinue
if (Test-Path -LiteralPath $file) {
    if ($null -ne $registered) {
        Unregister-ScheduledTask -TaskName $task -TaskPath '\capwin\' -Confirm:$false
        Remove-Item -LiteralPath $work -Recurse -Force -ErrorAction SilentlyContinue
    }
    return @{ state = 'ready'; path = $file }
}
if ($null -ne $registered -and "$($registered.State)" -in 'Running', 'Queued') {
    return @{ state = 'copying'; path = $file }
}
if ($null -ne $registered) {
    Unregister-ScheduledTask -TaskName $task -TaskPath '\capwin\' -Confirm:$false
}
if (Test-Path -LiteralPath $failed) {
    # Reported once: the next create of this parent tries again (the source may be fixed by then).
    $failure = Get-Content -LiteralPath $failed -Raw | ConvertFrom-Json
    Remove-Item -LiteralPath $failed, $work -Recurse -Force -ErrorAction SilentlyContinue
    return @{ state = 'failed'; path = $file; kind = "$($failure.kind)"; message = "$($failure.message)" }
}
Start-CapwinFetch $task $work @{ url = $In.url }
return @{ state = 'copying'; path = $file }
