# capwin node log collector. This file is static: every value comes from $CapwinCollect, the
# base64 JSON document assigned on the script's first line. capwin's infrastructure manager copies
# it into the guest through the hypervisor's guest agent (VMware Tools guest operations, Hyper-V
# PowerShell Direct) when someone asks for the node's logs (`render logs`), runs it, copies the zip
# it leaves out and deletes it. It reads only: the log files and folders the document names (the
# end of each), the System and Application event logs, and the state of the node's network (HNS),
# services, adapters and volumes. It changes nothing on the node but its own folder.
Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

$Collect = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($CapwinCollect)) | ConvertFrom-Json
$Report = New-Object System.Collections.Generic.List[string]

function Write-Note {
    param([string]$Message)
    $Report.Add(('{0} {1}' -f (Get-Date).ToUniversalTime().ToString('o'), $Message))
}

# Get-ArchivePath is a guest path's name in the archive: files\ and the path without the drive's
# colon (C:\var\log\x.log is files\C\var\log\x.log).
function Get-ArchivePath {
    param([string]$Path)
    return Join-Path (Join-Path $Collect.work 'files') ($Path -replace '^([A-Za-z]):', '$1')
}

# Copy-Tail copies the last $Max bytes of a file that its service may be writing (shared read).
function Copy-Tail {
    param([string]$Path, [long]$Max)
    $target = Get-ArchivePath $Path
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $target) | Out-Null
    $share = [IO.FileShare]'ReadWrite, Delete'
    $in = [IO.File]::Open($Path, [IO.FileMode]::Open, [IO.FileAccess]::Read, $share)
    try {
        if ($in.Length -gt $Max) {
            $in.Seek($in.Length - $Max, [IO.SeekOrigin]::Begin) | Out-Null
        }
        $out = [IO.File]::Create($target)
        try {
            $in.CopyTo($out)
        } finally {
            $out.Dispose()
        }
    } finally {
        $in.Dispose()
    }
}

# Copy-Files copies the end of every file the document names, folders with their sub-folders.
function Copy-Files {
    param([long]$Max)
    $paths = New-Object System.Collections.Generic.List[string]
    foreach ($dir in $Collect.directories) {
        if (Test-Path -LiteralPath $dir -PathType Container) {
            foreach ($file in Get-ChildItem -LiteralPath $dir -Recurse -File -Force -ErrorAction SilentlyContinue) {
                $paths.Add($file.FullName)
            }
        } else {
            Write-Note "no folder $dir"
        }
    }
    foreach ($file in $Collect.files) {
        if (Test-Path -LiteralPath $file -PathType Leaf) {
            $paths.Add($file)
        } else {
            Write-Note "no file $file"
        }
    }
    foreach ($path in $paths) {
        try {
            Copy-Tail -Path $path -Max $Max
        } catch {
            Write-Note "cannot read ${path}: $_"
        }
    }
}

# Save-Text writes what a command printed to state\<name>.txt; a command that fails leaves a note.
function Save-Text {
    param([string]$Name, [scriptblock]$Command)
    # What a command writes to its error stream belongs in its text, not in a stop.
    $ErrorActionPreference = 'Continue'
    $dir = Join-Path $Collect.work 'state'
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    try {
        $text = & $Command 2>&1 | Out-String -Width 250
        Set-Content -LiteralPath (Join-Path $dir ($Name + '.txt')) -Value $text -Encoding UTF8
    } catch {
        Write-Note "${Name}: $_"
    }
}

# Save-State records the node's network (HNS), services, adapters and volumes.
function Save-State {
    if (Get-Command -Name 'hnsdiag.exe' -ErrorAction SilentlyContinue) {
        Save-Text 'hnsdiag' { hnsdiag.exe list all }
    } else {
        Write-Note 'no hnsdiag.exe on this node'
    }
    if (Get-Command -Name 'Get-HnsNetwork' -ErrorAction SilentlyContinue) {
        Save-Text 'hns-networks' { Get-HnsNetwork | ConvertTo-Json -Depth 6 }
        Save-Text 'hns-endpoints' { Get-HnsEndpoint | ConvertTo-Json -Depth 6 }
    } else {
        Write-Note 'no Get-HnsNetwork (module HostNetworkingService) on this node'
    }
    $services = @('containerd', 'kubelet', 'kubeproxy', 'flanneld', 'cloudbase-init', 'vmtools')
    Save-Text 'services' { Get-Service -Name $services -ErrorAction SilentlyContinue | Format-Table -AutoSize -Property @('Name', 'Status', 'StartType') }
    Save-Text 'ipconfig' { ipconfig.exe /all }
    Save-Text 'adapters' { Get-NetAdapter | Format-Table -AutoSize -Property @('Name', 'InterfaceDescription', 'Status', 'MacAddress', 'LinkSpeed') }
    Save-Text 'volumes' { Get-Volume | Format-Table -AutoSize -Property @('DriveLetter', 'FileSystemLabel', 'FileSystem', 'HealthStatus', 'SizeRemaining', 'Size') }
    Save-Text 'computer' { Get-CimInstance -ClassName 'Win32_OperatingSystem' | Format-List -Property @('Caption', 'Version', 'BuildNumber', 'LastBootUpTime', 'FreePhysicalMemory') }
}

# Save-Events writes the latest events of each event log the document names to events\<log>.json.
function Save-Events {
    $dir = Join-Path $Collect.work 'events'
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    foreach ($log in $Collect.eventLogs) {
        try {
            $fields = @('TimeCreated', 'Id', 'LevelDisplayName', 'ProviderName', 'Message')
            $events = Get-WinEvent -LogName $log -MaxEvents $Collect.maxEvents | Select-Object -Property $fields
            Set-Content -LiteralPath (Join-Path $dir ($log + '.json')) -Value (ConvertTo-Json -InputObject @($events) -Depth 3) -Encoding UTF8
        } catch {
            Write-Note "event log ${log}: $_"
        }
    }
}

# New-Archive zips the folder to the output; files are cut to half their length until it fits.
function New-Archive {
    Add-Type -AssemblyName 'System.IO.Compression.FileSystem'
    $max = [long]$Collect.maxFileBytes
    while ($true) {
        if (Test-Path -LiteralPath $Collect.output) {
            Remove-Item -LiteralPath $Collect.output -Force
        }
        Set-Content -LiteralPath (Join-Path $Collect.work 'collect.log') -Value ($Report -join "`r`n") -Encoding UTF8
        [IO.Compression.ZipFile]::CreateFromDirectory($Collect.work, $Collect.output, [IO.Compression.CompressionLevel]::Optimal, $false)
        $size = (Get-Item -LiteralPath $Collect.output).Length
        if ($size -le $Collect.maxArchiveBytes -or $max -le 4096) {
            return
        }
        $max = [long]($max / 2)
        Write-Note "the archive had $size bytes: keeping the last $max bytes of each file"
        Remove-Item -LiteralPath (Join-Path $Collect.work 'files') -Recurse -Force -ErrorAction SilentlyContinue
        Copy-Files -Max $max
    }
}

if (Test-Path -LiteralPath $Collect.work) {
    Remove-Item -LiteralPath $Collect.work -Recurse -Force
}
New-Item -ItemType Directory -Force -Path $Collect.work | Out-Null
Write-Note ('collecting on {0}' -f $env:COMPUTERNAME)
try {
    Copy-Files -Max $Collect.maxFileBytes
    Save-State
    Save-Events
    New-Archive
} finally {
    Remove-Item -LiteralPath $Collect.work -Recurse -Force -ErrorAction SilentlyContinue
}
exit 0
