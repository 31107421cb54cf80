# guest.ps1 copies files into a running guest with PowerShell Direct and starts the launcher once,
# detached from the session; the process id is recorded in the VM's notes, which the guest cannot
# change. A launcher already running (an earlier run stopped before recording) is recorded instead.
param($In)
$vm = Get-VM -Id ([guid]$In.id)
$secret = ConvertTo-SecureString -String $In.password -AsPlainText -Force
$credential = New-Object System.Management.Automation.PSCredential($In.username, $secret)
$launcher = {
    param($Job)
    $running = Get-CimInstance -ClassName 'Win32_Process' | Where-Object { $_.CommandLine -and $_.CommandLine.Contains($Job.launchPath) } | Select-Object -First 1
    if ($null -ne $running) {
        return $running.ProcessId
    }
    New-Item -ItemType Directory -Force -Path $Job.directory | Out-Null
    foreach ($file in $Job.files) {
        [IO.File]::WriteAllBytes($file.path, [Convert]::FromBase64String($file.data))
    }
    $started = Invoke-CimMethod -ClassName 'Win32_Process' -MethodName 'Create' -Arguments @{ CommandLine = $Job.commandLine }
    if ($started.ReturnValue -ne 0) {
        throw ('starting the launcher failed with {0}' -f $started.ReturnValue)
    }
    return $started.ProcessId
}
try {
    $answer = Invoke-Command -VMId $vm.Id -Credential $credential -ArgumentList $In -ScriptBlock $launcher
} catch {
    Stop-Capwin 'GuestFailed' ('PowerShell Direct as {0}: {1}' -f $In.username, $_)
}
# The guest's answer becomes a number before it reaches the notes, so a guest cannot write lines
# into them.
$launcherId = [int64]0
if (-not [int64]::TryParse([string]$answer, [ref]$launcherId) -or $launcherId -le 0) {
    Stop-Capwin 'GuestFailed' 'the guest answered no process id for the launcher'
}
Set-VM -VM $vm -Notes ("{0}`ncapwin-guest-run:pid={1}" -f $vm.Notes, $launcherId)
return @{ pid = $launcherId }
