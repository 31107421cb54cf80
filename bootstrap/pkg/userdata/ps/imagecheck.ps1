# capwin image check (render image-check). This file is static: what to compare against comes from
# $CapwinData, the base64 JSON document on the script's data line. It joins nothing and changes
# nothing: it lists what the image has for a capwin node, and reports it once through the
# bootstrap's status channel (guestinfo on vSphere, a KVP item on Hyper-V) as step 'image-check':
# state Succeeded when nothing is missing, Failed with what is, and the inventory as key=value
# lines in the log tail.
Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Continue'
$ProgressPreference = 'SilentlyContinue'

$Data = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($CapwinData)) | ConvertFrom-Json
$found = [ordered]@{}
$lacks = [Collections.Generic.List[string]]::new()

# Get-Version is the first x.y.z of a program's --version output ('' when it does not run).
function Get-Version {
    param([string]$Path)
    if (-not (Test-Path -LiteralPath $Path)) { return '' }
    $out = (& $Path --version 2>&1) -join ' '
    if ($out -match 'v?(\d+\.\d+\.\d+)') { return $Matches[1] }
    return ''
}

function Test-AtLeast {
    param([string]$Have, [string]$Want)
    if ($Have -eq '' -or $Want -eq '') { return $Have -ne '' }
    return ([version]$Have) -ge ([version]$Want)
}

$build = [Environment]::OSVersion.Version.Build
$found['windows'] = "$build"
if ($build -lt $Data.minimumBuild) { $lacks.Add("Windows build $($Data.minimumBuild) or later (has $build)") }

$cbi = Get-ItemProperty -Path 'HKLM:\SOFTWARE\Microsoft\Windows\CurrentVersion\Uninstall\*' -ErrorAction SilentlyContinue |
    Where-Object { $_.PSObject.Properties['DisplayName'] -and $_.DisplayName -like 'Cloudbase-Init*' } | Select-Object -First 1
$cbiVersion = ''
if ($cbi) { $cbiVersion = ($cbi.DisplayVersion -replace '^(\d+\.\d+\.\d+).*', '$1') }
$found['cloudbase-init'] = $cbiVersion
if (-not (Test-AtLeast $cbiVersion $Data.minimumCloudbaseInit)) { $lacks.Add("cloudbase-init $($Data.minimumCloudbaseInit) or later") }
$conf = Join-Path $env:ProgramFiles 'Cloudbase Solutions\Cloudbase-Init\conf\cloudbase-init.conf'
$services = ''
if (Test-Path -LiteralPath $conf) {
    $line = Get-Content -LiteralPath $conf | Where-Object { $_ -match '^\s*metadata_services\s*=' } | Select-Object -First 1
    if ($line) { $services = (($line -split '=', 2)[1] -split ',' | ForEach-Object { ($_.Trim() -split '\.')[-1] }) -join ',' }
}
$found['metadata-services'] = $services
if ($Data.metadataService -and ($services -split ',') -notcontains $Data.metadataService) {
    $lacks.Add("cloudbase-init's $($Data.metadataService) in metadata_services")
}

foreach ($feature in $Data.features) {
    $state = ''
    $f = Get-WindowsFeature -Name $feature -ErrorAction SilentlyContinue
    if ($f) { $state = "$($f.InstallState)" }
    $found["feature-$($feature.ToLowerInvariant())"] = $state
    if ($state -ne 'Installed') { $lacks.Add("the Windows feature $feature") }
}

$containerd = Get-Version (Join-Path $env:ProgramFiles 'containerd\containerd.exe')
$found['containerd'] = $containerd
if ($containerd -eq '') { $lacks.Add('containerd in C:\Program Files\containerd') }

$kubelet = Get-Version (Join-Path $Data.binariesDirectory 'kubelet.exe')
$found['kubelet'] = $kubelet
if ($Data.kubernetesVersion -and "v$kubelet" -ne $Data.kubernetesVersion) {
    $lacks.Add("kubelet.exe $($Data.kubernetesVersion) in $($Data.binariesDirectory)")
}
$kubeadm = Test-Path -LiteralPath (Join-Path $Data.binariesDirectory 'kubeadm.exe')
$found['kubeadm'] = "$kubeadm".ToLowerInvariant()
if (-not $kubeadm) { $lacks.Add("kubeadm.exe in $($Data.binariesDirectory)") }

if ($Data.vmwareTools) {
    $tools = Get-Service -Name VMTools -ErrorAction SilentlyContinue
    $found['vmware-tools'] = if ($tools) { "$($tools.Status)".ToLowerInvariant() } else { '' }
    if (-not $tools -or $tools.Status -ne 'Running') { $lacks.Add('VMware Tools running') }
}

$disk = Get-CimInstance -ClassName Win32_LogicalDisk -Filter "DeviceID='C:'"
$free = [math]::Floor($disk.FreeSpace / 1073741824)
$found['free-gib'] = "$free"
if ($free -lt $Data.minimumFreeGiB) { $lacks.Add("$($Data.minimumFreeGiB) GiB free on C: (has $free)") }

$time = Get-Service -Name W32Time -ErrorAction SilentlyContinue
$found['time-service'] = if ($time) { "$($time.Status)".ToLowerInvariant() } else { '' }

$inventory = ($found.GetEnumerator() | ForEach-Object { '{0}={1}' -f $_.Key, $_.Value }) -join "`n"
$state = 'Succeeded'
$message = 'the image has what a capwin node needs'
if ($lacks.Count -gt 0) {
    $state = 'Failed'
    $message = 'lacks: ' + ($lacks -join '; ')
}
if ($message.Length -gt 256) { $message = $message.Substring(0, 256) }
$report = [ordered]@{ step = 'image-check'; state = $state; message = $message; logTail = $inventory }
$json = $report | ConvertTo-Json -Compress
while ([Text.Encoding]::UTF8.GetByteCount($json) -gt $Data.status.maxBytes -and $report.logTail.Length -gt 0) {
    $report.logTail = $report.logTail.Substring(0, [Math]::Max(0, $report.logTail.Length - 64))
    $json = $report | ConvertTo-Json -Compress
}
$rpctool = Join-Path $env:ProgramFiles 'VMware\VMware Tools\rpctool.exe'
if (Test-Path -LiteralPath $rpctool) {
    $command = 'info-set {0} {1}' -f $Data.status.guestinfoKey, $json
    if ($PSVersionTable.PSVersion.Major -lt 7) {
        # Windows PowerShell passes the argument without escaping its quotes: MSVCRT's rules, as
        # bootstrap.ps1's ConvertTo-NativeArgument.
        $command = [regex]::Replace($command, '(\\*)"', { param($m) $m.Groups[1].Value + $m.Groups[1].Value + '\"' })
        $command = [regex]::Replace($command, '(\\+)$', '$1$1')
    }
    & $rpctool $command | Out-Null
}
if (Test-Path -LiteralPath $Data.status.kvpKey) {
    Set-ItemProperty -Path $Data.status.kvpKey -Name $Data.status.kvpValue -Value $json
}
