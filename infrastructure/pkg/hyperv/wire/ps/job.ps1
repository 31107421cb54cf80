# job.ps1 reports a host job started by power.ps1.
param($In)
$filter = "InstanceID='{0}'" -f ([guid]$In.job).ToString()
$job = Get-CimInstance -Namespace 'root\virtualization\v2' -ClassName 'Msvm_ConcreteJob' -Filter $filter
if ($null -eq $job) {
    return @{ state = 'unknown'; message = '' }
}
switch ([int]$job.JobState) {
    7 { return @{ state = 'succeeded'; message = '' } }
    { $_ -in 8, 9, 10 } { return @{ state = 'failed'; message = "$($job.ErrorDescription)" } }
    default { return @{ state = 'running'; message = "$($job.PercentComplete)%" } }
}
