# guestlogs.ps1 runs capwin's log collector in a running guest with PowerShell Direct: it copies
# the collector (a static script with its data document, from the input) in, runs it to its end,
# and returns the zip it made, base64; the collector and the zip are deleted from the guest. The
# guest's answer is only ever data: its exit code and the zip's bytes.
param($In)
$vm = Get-VM -Id ([guid]$In.id)
$secret = ConvertTo-SecureString -String $In.password -AsPlainText -Force
$credential = New-Object System.Management.Automation.PSCredential($In.username, $secret)
$collector = {
    param($Job)
    New-Item -ItemType Directory -Force -Path $Job.directory | Out-Null
    [IO.File]::WriteAllBytes($Job.scriptPath, [Convert]::FromBase64String($Job.script))
    try {
        $process = Start-Process -FilePath $Job.powerShell -ArgumentList $Job.arguments -Wait -PassThru -WindowStyle Hidden
        if ($process.ExitCode -ne 0 -or -not (Test-Path -LiteralPath $Job.output)) {
            return @{ exitCode = $process.ExitCode; data = '' }
        }
        return @{ exitCode = 0; data = [Convert]::ToBase64String([IO.File]::ReadAllBytes($Job.output)) }
    } finally {
        Remove-Item -LiteralPath $Job.scriptPath, $Job.output -Force -ErrorAction SilentlyContinue
    }
}
try {
    $answer = Invoke-Command -VMId $vm.Id -Credential $credential -ArgumentList $In -ScriptBlock $collector
} catch {
    Stop-Capwin 'GuestFailed' ('PowerShell Direct as {0}: {1}' -f $In.username, $_)
}
$exitCode = [int64]0
if ($null -eq $answer -or -not [int64]::TryParse([string]$answer.exitCode, [ref]$exitCode)) {
    Stop-Capwin 'GuestFailed' 'the guest gave no answer from the log collector'
}
if ($exitCode -ne 0) {
    Stop-Capwin 'GuestFailed' ('the log collector ended with exit code {0}' -f $exitCode)
}
# A guest that hands back more than a log archive may is answered on the host: the zip does not
# cross WinRM.
$data = [string]$answer.data
$size = [int64]0
if ($data.Length -gt 0) {
    $size = [Convert]::FromBase64String($data).Length
}
if ($size -gt [int64]$In.maxBytes) {
    Stop-Capwin 'GuestFailed' ("the guest's archive has {0} bytes, more than the {1} a log archive may" -f $size, $In.maxBytes)
}
return @{ data = $data }
