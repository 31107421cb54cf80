# capwin Windows node bootstrap. This file is static: every value of this node comes from
# $CapwinData, the base64 JSON document assigned on the script's data line, which is followed by
# the shared network.ps1 (internal/guestos: Set-Network) and this file. The script is idempotent and
# may run again after a reboot (cloudbase-init exit code 1003, or the standalone startup task);
# completed steps are recorded in the state directory and skipped.
Set-StrictMode -Version 3.0
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

$Data = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($CapwinData)) | ConvertFrom-Json
$Self = $MyInvocation.MyCommand.ScriptBlock.ToString()
$Step = 'start'
$DoneFile = Join-Path $Data.paths.stateDir 'steps.done'

function Get-Field {
    param($Object, [string]$Name)
    $property = $Object.PSObject.Properties[$Name]
    if ($null -eq $property) {
        return $null
    }
    return $property.Value
}

# Get-List returns a field as an array (empty when the field is absent).
function Get-List {
    param($Object, [string]$Name)
    $value = Get-Field $Object $Name
    if ($null -eq $value) {
        return ,@()
    }
    return ,@($value)
}

function Write-Log {
    param([string]$Message)
    $line = '{0} [{1}] {2}' -f (Get-Date).ToUniversalTime().ToString('o'), $Step, $Message
    Add-Content -Path $Data.paths.logFile -Value $line -Encoding UTF8
    Write-Host $line
}

function Test-Done {
    param([string]$Name)
    return (Test-Path $DoneFile) -and ((Get-Content -Path $DoneFile) -contains $Name)
}

function Set-Done {
    param([string]$Name)
    Add-Content -Path $DoneFile -Value $Name -Encoding UTF8
}

# ConvertTo-NativeArgument escapes quotes for Windows PowerShell 5.1, which passes arguments to
# native programs without escaping embedded quotes (MSVCRT rules: backslashes before a quote double).
function ConvertTo-NativeArgument {
    param([string]$Value)
    if ($PSVersionTable.PSVersion.Major -ge 7) {
        return $Value
    }
    return ConvertTo-EscapedArgument $Value
}

# ConvertTo-EscapedArgument escapes a quote and the backslashes before it, and doubles trailing
# backslashes (MSVCRT rules), for an argument that is then put in quotes.
function ConvertTo-EscapedArgument {
    param([string]$Value)
    $escaped = [regex]::Replace($Value, '(\\*)"', { param($m) $m.Groups[1].Value + $m.Groups[1].Value + '\"' })
    return [regex]::Replace($escaped, '(\\+)$', '$1$1')
}

function Send-Status {
    param([string]$Name, [string]$Phase, [string]$Message)
    $tail = ''
    if (Test-Path $Data.paths.logFile) {
        $tail = (Get-Content -Path $Data.paths.logFile -Tail 6) -join "`n"
    }
    if ($tail.Length -gt 512) {
        $tail = $tail.Substring($tail.Length - 512)
    }
    if ($Message.Length -gt 256) {
        $Message = $Message.Substring(0, 256)
    }
    $status = [ordered]@{ step = $Name; state = $Phase; message = $Message; logTail = $tail }
    $json = $status | ConvertTo-Json -Compress
    while ([Text.Encoding]::UTF8.GetByteCount($json) -gt $Data.status.maxBytes -and $status.logTail.Length -gt 0) {
        $status.logTail = $status.logTail.Substring([Math]::Min(64, $status.logTail.Length))
        $json = $status | ConvertTo-Json -Compress
    }
    try {
        $rpctool = Join-Path $env:ProgramFiles 'VMware\VMware Tools\rpctool.exe'
        if (Test-Path $rpctool) {
            $command = 'info-set {0} {1}' -f $Data.status.guestinfoKey, $json
            & $rpctool (ConvertTo-NativeArgument $command) | Out-Null
        }
        if (Test-Path $Data.status.kvpKey) {
            Set-ItemProperty -Path $Data.status.kvpKey -Name $Data.status.kvpValue -Value $json
        }
    } catch {
        Write-Host "status report failed: $_"
    }
}

# Invoke-Native runs a program, logs its output and returns its exit code.
function Invoke-Native {
    param([string]$FilePath, [string[]]$Arguments)
    $ErrorActionPreference = 'Continue'
    $output = & $FilePath @Arguments 2>&1
    $code = $LASTEXITCODE
    foreach ($line in $output) {
        Write-Log ('  ' + $line)
    }
    return $code
}

# Protect-Directory creates a directory for secrets (the join token, kubeconfigs, keys) that
# only SYSTEM and Administrators can open; files created inside inherit that.
function Protect-Directory {
    param([string]$Path)
    New-Item -ItemType Directory -Force -Path $Path | Out-Null
    $code = Invoke-Native 'icacls.exe' @($Path, '/inheritance:r', '/grant:r', '*S-1-5-18:(OI)(CI)F', '/grant:r', '*S-1-5-32-544:(OI)(CI)F')
    if ($code -ne 0) {
        throw "icacls on $Path exited with code $code"
    }
}

function Request-Reboot {
    param([string]$Reason)
    Write-Log "rebooting: $Reason; the bootstrap continues after the reboot"
    Send-Status $Step 'Rebooting' $Reason
    if ($Data.mode -eq 'cloudbase-init') {
        exit 1003
    }
    $copy = Join-Path $Data.paths.stateDir 'bootstrap.ps1'
    Set-Content -Path $copy -Value $Self -Encoding UTF8
    $action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument ('-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "{0}"' -f $copy)
    $trigger = New-ScheduledTaskTrigger -AtStartup
    Register-ScheduledTask -TaskName 'capwin-bootstrap' -Action $action -Trigger $trigger -User 'SYSTEM' -RunLevel Highest -Force | Out-Null
    Restart-Computer -Force
    exit 0
}

function Step-Preflight {
    $build = [Environment]::OSVersion.Version.Build
    if ($build -lt $Data.minimumBuild) {
        throw "Windows build $build is older than the oldest supported build $($Data.minimumBuild) (Windows Server 2022)"
    }
    foreach ($dir in $Data.paths.private) {
        Protect-Directory $dir
    }
    foreach ($dir in $Data.paths.directories) {
        New-Item -ItemType Directory -Force -Path $dir | Out-Null
    }
    Write-Log "Windows build $build; Kubernetes $($Data.kubernetesVersion)"
}

# Get-NetworkDocument returns capwin's network document, which the infrastructure provider puts
# beside the instance metadata of a cloudbase-init guest: a guestinfo key (base64) read through
# VMware Tools on vSphere, a file on the config drive on Hyper-V; $null when there is none.
function Get-NetworkDocument {
    $source = $Data.networkSource
    $vmtoolsd = Join-Path $env:ProgramFiles 'VMware\VMware Tools\vmtoolsd.exe'
    if (Test-Path $vmtoolsd) {
        $ErrorActionPreference = 'Continue'
        $value = & $vmtoolsd '--cmd' ('info-get ' + $source.guestinfoKey) 2>$null
        if ($LASTEXITCODE -eq 0 -and $value) {
            $json = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String((@($value) -join '').Trim()))
            return $json | ConvertFrom-Json
        }
    }
    foreach ($volume in @(Get-Volume | Where-Object { $_.FileSystemLabel -eq $source.volumeLabel -and $_.DriveLetter })) {
        $path = '{0}:\{1}' -f $volume.DriveLetter, $source.file
        if (Test-Path $path) {
            return [IO.File]::ReadAllText($path) | ConvertFrom-Json
        }
    }
    return $null
}

# Step-Network applies what cloudbase-init leaves out of the network config (routes with their
# metrics, the IPv6 MTU, the DNS suffix search list) with the launcher's own Set-Network, before
# anything uses the network (the domain controller may need the routes and the search list).
# Without a document it does nothing; on a guest the launcher configured it changes nothing.
function Step-Network {
    $document = Get-NetworkDocument
    if ($null -eq $document) {
        Write-Log 'no capwin network document: the network stays as cloudbase-init left it'
        return
    }
    Set-Network $document
}

function Get-ProxyVariables {
    $proxy = Get-Field $Data 'proxy'
    $vars = @()
    if ($null -eq $proxy) {
        return $vars
    }
    foreach ($pair in @(@('HTTP_PROXY', 'httpProxy'), @('HTTPS_PROXY', 'httpsProxy'), @('NO_PROXY', 'noProxy'))) {
        $value = Get-Field $proxy $pair[1]
        if ($value) {
            $vars += ('{0}={1}' -f $pair[0], $value)
        }
    }
    return $vars
}

function Set-ServiceEnvironment {
    param([string]$Service)
    $vars = @(Get-ProxyVariables)
    if ($vars.Count -gt 0) {
        Set-ItemProperty -Path "HKLM:\SYSTEM\CurrentControlSet\Services\$Service" -Name 'Environment' -Type MultiString -Value $vars
    }
}

function Step-Proxy {
    foreach ($entry in @(Get-ProxyVariables)) {
        $name, $value = $entry -split '=', 2
        [Environment]::SetEnvironmentVariable($name, $value, 'Machine')
        [Environment]::SetEnvironmentVariable($name, $value, 'Process')
    }
}

function Step-Time {
    $time = Get-Field $Data 'time'
    if ($null -eq $time) {
        return
    }
    $zone = Get-Field $time 'timezone'
    if ($zone) {
        Set-TimeZone -Id $zone
    }
    $servers = Get-List $time 'ntpServers'
    if ($servers.Count -gt 0) {
        $code = Invoke-Native 'w32tm.exe' @('/config', ('/manualpeerlist:' + ($servers -join ' ')), '/syncfromflags:manual', '/update')
        if ($code -ne 0) {
            throw "w32tm exited with code $code"
        }
        Restart-Service -Name 'w32time'
    }
}

# Step-Domain joins the Active Directory domain and restarts; after the restart the computer is
# a member and the step ends. The join account's password is used in memory only.
function Step-Domain {
    $domain = Get-Field $Data 'domain'
    if ($null -eq $domain) {
        return
    }
    $system = Get-CimInstance -ClassName Win32_ComputerSystem
    if ($system.PartOfDomain -and ($system.Domain -eq $domain.name)) {
        Write-Log "the computer is a member of $($domain.name)"
        return
    }
    $servers = Get-List $domain 'dnsServers'
    if ($servers.Count -gt 0) {
        foreach ($adapter in @(Get-NetAdapter -Physical | Where-Object { $_.Status -eq 'Up' })) {
            Set-DnsClientServerAddress -InterfaceIndex $adapter.ifIndex -ServerAddresses $servers
        }
    }
    $existing = Find-ComputerAccount $domain
    $notBefore = Get-Field $domain 'accountNotBefore'
    if ($existing -and $notBefore -and -not (Get-Field $domain 'reuseAccount')) {
        $since = [DateTime]::Parse($notBefore, [Globalization.CultureInfo]::InvariantCulture, [Globalization.DateTimeStyles]::AdjustToUniversal)
        if ($existing.Created -lt $since) {
            throw "the domain already has a computer account named $env:COMPUTERNAME ($($existing.DN), created $($existing.Created.ToString('u'))), older than this Machine: a stale account of an earlier node, or another computer's. The join does not reuse it: delete the account, or set activeDirectory.computerAccounts.reuse: Allow"
        }
    }
    if ($existing) {
        Write-Log "joining with the existing computer account $($existing.DN)"
    }
    $password = ConvertTo-SecureString -String $domain.password -AsPlainText -Force
    $credential = New-Object System.Management.Automation.PSCredential ($domain.username, $password)
    $join = @{ DomainName = $domain.name; Credential = $credential; Force = $true }
    $ou = Get-Field $domain 'organizationalUnit'
    if ($ou) {
        $join['OUPath'] = $ou
    }
    try {
        Add-Computer @join
    } catch {
        throw "joining domain $($domain.name) was refused: $($_.Exception.Message)"
    }
    Request-Reboot "joined domain $($domain.name) as $env:COMPUTERNAME"
}

# Find-ComputerAccount returns the DN and creation time (UTC) of the domain's computer account of
# this computer's name, as the join account sees it (signed and sealed bind), or nothing.
function Find-ComputerAccount {
    param($Domain)
    $root = New-Object System.DirectoryServices.DirectoryEntry ("LDAP://$($Domain.name)", $Domain.username, $Domain.password)
    $searcher = New-Object System.DirectoryServices.DirectorySearcher ($root)
    $searcher.Filter = "(&(objectCategory=computer)(sAMAccountName=$($env:COMPUTERNAME)`$))"
    [void]$searcher.PropertiesToLoad.Add('distinguishedName')
    [void]$searcher.PropertiesToLoad.Add('whenCreated')
    try {
        $found = $searcher.FindOne()
    } catch {
        throw "looking up computer account $env:COMPUTERNAME in $($Domain.name) failed: $($_.Exception.Message)"
    }
    if ($found) {
        # The directory searcher gives whenCreated in UTC.
        $created = [DateTime]::SpecifyKind($found.Properties['whencreated'][0], [DateTimeKind]::Utc)
        return [pscustomobject]@{ DN = [string]$found.Properties['distinguishedname'][0]; Created = $created }
    }
}

# Step-DomainGroups waits until the bootstrap manager has put this computer's account in the
# groups (e.g. a gMSA's hosts group), then purges the computer's Kerberos tickets so the next one
# carries the groups (no second restart). Past the wait it goes on without them.
function Step-DomainGroups {
    $domain = Get-Field $Data 'domain'
    if ($null -eq $domain) {
        return
    }
    $groups = Get-List $domain 'groups'
    if ($groups.Count -eq 0) {
        return
    }
    $deadline = (Get-Date).AddSeconds($domain.groupWaitSeconds)
    while ($true) {
        $searcher = New-Object System.DirectoryServices.DirectorySearcher
        $searcher.Filter = "(&(objectCategory=computer)(sAMAccountName=$($env:COMPUTERNAME)`$))"
        [void]$searcher.PropertiesToLoad.Add('memberOf')
        $memberOf = @()
        try {
            $found = $searcher.FindOne()
            if ($found) {
                $memberOf = @($found.Properties['memberof'])
            }
        } catch {
            Write-Log "reading the computer account's groups failed: $($_.Exception.Message)"
        }
        $missing = @($groups | Where-Object { $memberOf -notcontains $_ })
        if ($missing.Count -eq 0) {
            break
        }
        if ((Get-Date) -gt $deadline) {
            Write-Log "not a member of $($missing -join '; ') after $($domain.groupWaitSeconds) s: going on; pods using a gMSA of those groups fail until the membership is there and the tickets are renewed (klist -li 0x3e7 purge)"
            return
        }
        $message = "waiting for the bootstrap manager to add $env:COMPUTERNAME to $($missing -join '; ')"
        Write-Log $message
        Send-Status $Step 'Running' $message
        Start-Sleep -Seconds 10
    }
    & klist.exe -li 0x3e7 purge | Out-Null
    Write-Log "member of $($groups -join '; '); the computer's Kerberos tickets were purged"
}

function Write-Keys {
    param([string]$Path, [string[]]$Keys, [string]$Owner)
    New-Item -ItemType Directory -Force -Path (Split-Path -Parent $Path) | Out-Null
    [IO.File]::WriteAllText($Path, (($Keys -join "`n") + "`n"))
    $code = Invoke-Native 'icacls.exe' @($Path, '/inheritance:r', '/grant', '*S-1-5-18:F', '/grant', '*S-1-5-32-544:F', '/grant', ($Owner + ':F'))
    if ($code -ne 0) {
        throw "icacls on $Path exited with code $code"
    }
}

function Step-Users {
    foreach ($user in (Get-List $Data 'users')) {
        if (-not (Get-LocalUser -Name $user.name -ErrorAction SilentlyContinue)) {
            # A random password nobody knows: the account is reached by SSH key only (a blank
            # password would allow a console logon).
            $bytes = New-Object byte[] 32
            [System.Security.Cryptography.RandomNumberGenerator]::Create().GetBytes($bytes)
            $password = ConvertTo-SecureString ([Convert]::ToBase64String($bytes) + 'aA1!') -AsPlainText -Force
            New-LocalUser -Name $user.name -Password $password -AccountNeverExpires | Out-Null
        }
        foreach ($group in (Get-List $user 'groups')) {
            if (-not (Get-LocalGroupMember -Group $group -Member $user.name -ErrorAction SilentlyContinue)) {
                Add-LocalGroupMember -Group $group -Member $user.name
            }
        }
        $keys = Get-List $user 'sshAuthorizedKeys'
        if ($keys.Count -gt 0) {
            Write-Keys (Join-Path $env:SystemDrive "Users\$($user.name)\.ssh\authorized_keys") $keys $user.name
        }
    }
    $adminKeys = Get-List $Data 'adminKeys'
    if ($adminKeys.Count -gt 0) {
        Write-Keys (Join-Path $env:ProgramData 'ssh\administrators_authorized_keys') $adminKeys '*S-1-5-32-544'
    }
}

function Step-Features {
    $pending = @()
    foreach ($name in $Data.features) {
        $feature = Get-WindowsFeature -Name $name
        if ($feature.InstallState -eq 'Installed') {
            continue
        }
        if ($feature.InstallState -ne 'InstallPending') {
            Write-Log "enabling Windows feature $name"
            $result = Install-WindowsFeature -Name $name
            if (-not $result.Success) {
                throw "enabling Windows feature $name failed"
            }
            if ($result.RestartNeeded -eq 'No') {
                continue
            }
        }
        $pending += $name
    }
    if ($pending.Count -gt 0) {
        Request-Reboot ('Windows features need a restart: ' + ($pending -join ', '))
    }
}

function Step-Downloads {
    [Net.ServicePointManager]::SecurityProtocol = [Net.SecurityProtocolType]::Tls12
    foreach ($download in (Get-List $Data 'downloads')) {
        $partial = $download.path + '.partial'
        $attempt = 0
        while ($true) {
            $attempt++
            try {
                Write-Log "downloading $($download.url) (attempt $attempt)"
                Invoke-WebRequest -UseBasicParsing -Uri $download.url -OutFile $partial
                break
            } catch {
                if ($attempt -ge 5) {
                    throw "download of $($download.url) failed: $_"
                }
                Start-Sleep -Seconds (5 * $attempt)
            }
        }
        $hash = (Get-FileHash -Algorithm SHA256 -Path $partial).Hash.ToLowerInvariant()
        if ($hash -ne $download.sha256) {
            Remove-Item -Force -Path $partial
            throw "sha256 of $($download.url) is $hash, want $($download.sha256)"
        }
        $extract = Get-Field $download 'extract'
        if (-not $extract) {
            Stop-Running (Get-Field $download 'service')
        }
        Move-Item -Force -Path $partial -Destination $download.path
        if ($extract) {
            Install-Archive $download.path $extract (Get-Field $download 'service')
        }
    }
}

# Stop-Running stops a service that runs (a program being replaced); the step that uses it starts
# it again.
function Stop-Running([string]$Service) {
    if (-not $Service) {
        return
    }
    $running = Get-Service -Name $Service -ErrorAction SilentlyContinue
    if ($running -and $running.Status -ne 'Stopped') {
        Write-Log "stopping service $Service to replace its files"
        Stop-Service -Name $Service -Force
    }
}

# Install-Archive unpacks a .tar.gz (its bin folder, if it has one) into a folder. Windows cannot
# replace the program of a running service, so the archive is unpacked beside the folder first,
# the service that runs from it is stopped, and the files are copied over; the containerd step
# starts the service again. After a restart half-way the step runs again from the start.
function Install-Archive {
    param([string]$Archive, [string]$Folder, [string]$Service)
    $staging = $Folder.TrimEnd('\') + '.new'
    Remove-Item -Recurse -Force -ErrorAction SilentlyContinue -Path $staging
    New-Item -ItemType Directory -Force -Path $staging, $Folder | Out-Null
    $code = Invoke-Native 'tar.exe' @('-xzf', $Archive, '-C', $staging)
    if ($code -ne 0) {
        throw "unpacking $Archive failed with code $code"
    }
    $from = Join-Path $staging 'bin'
    if (-not (Test-Path $from)) {
        $from = $staging
    }
    Stop-Running $Service
    Copy-Item -Force -Recurse -Path (Join-Path $from '*') -Destination $Folder
    Remove-Item -Recurse -Force -Path $staging
}

# Find-DataDisk returns the disk at a SCSI target and LUN (Win32_DiskDrive's address; its Index
# is the disk number), waiting a minute for a disk the hypervisor attached late.
function Find-DataDisk {
    param($Want, [string]$Name)
    for ($attempt = 1; $attempt -le 12; $attempt++) {
        $drives = @(Get-CimInstance -ClassName Win32_DiskDrive | Where-Object { $_.SCSITargetId -eq $Want.target -and $_.SCSILogicalUnit -eq $Want.lun })
        if ($drives.Count -gt 1) {
            throw "$Name is ambiguous: $($drives.Count) disks have that SCSI address (on different controllers); attach data disks so that each target and LUN is used once"
        }
        if ($drives.Count -eq 1) {
            return Get-Disk -Number $drives[0].Index
        }
        Update-HostStorageCache
        Start-Sleep -Seconds 5
    }
    throw "$Name is not attached: no disk has that SCSI address"
}

# Get-DataPartition returns the disk's one data partition when it is formatted as asked, and
# $null for an initialized disk without partitions; anything else is someone's data and fails.
function Get-DataPartition {
    param($Disk, $Want, [string]$Name)
    $parts = @(Get-Partition -DiskNumber $Disk.Number | Where-Object { $_.Type -ne 'Reserved' })
    if ($Disk.PartitionStyle -ne $Want.partitionStyle) {
        throw "$Name has a $($Disk.PartitionStyle) partition table, want $($Want.partitionStyle); capwin never erases a disk: clear it or change spec.disks"
    }
    if ($parts.Count -eq 0) {
        return $null
    }
    $volume = $null
    if ($parts.Count -eq 1) {
        $volume = Get-Volume -Partition $parts[0] -ErrorAction SilentlyContinue
    }
    if ($null -eq $volume -or $volume.FileSystem -ne $Want.fileSystem -or $volume.FileSystemLabel -ne $Want.label) {
        $found = @($parts | ForEach-Object { Get-Volume -Partition $_ -ErrorAction SilentlyContinue } | ForEach-Object { "$($_.FileSystem) '$($_.FileSystemLabel)'" }) -join ', '
        throw "$Name holds $($parts.Count) partition(s) ($found), want one $($Want.fileSystem) volume labelled '$($Want.label)'; capwin never erases a disk: clear it or change spec.disks"
    }
    return $parts[0]
}

# Mount-DataPartition gives the partition its drive letter or mount folder, once.
function Mount-DataPartition {
    param($Partition, $Want, [string]$Name)
    $letter = Get-Field $Want 'driveLetter'
    if ($letter) {
        if ([string]$Partition.DriveLetter -eq $letter) {
            return
        }
        if (Get-Volume -DriveLetter $letter -ErrorAction SilentlyContinue) {
            throw "drive ${letter}: is taken by another volume; $Name cannot have it"
        }
        Set-Partition -DiskNumber $Partition.DiskNumber -PartitionNumber $Partition.PartitionNumber -NewDriveLetter $letter
        return
    }
    $path = $Want.mountPath
    if (@($Partition.AccessPaths) -contains $path) {
        return
    }
    if ((Test-Path $path) -and @(Get-ChildItem -Force -Path $path).Count -gt 0) {
        throw "mount folder $path is not empty; $Name is not mounted there"
    }
    New-Item -ItemType Directory -Force -Path $path | Out-Null
    Add-PartitionAccessPath -DiskNumber $Partition.DiskNumber -PartitionNumber $Partition.PartitionNumber -AccessPath $path
}

# Step-Disks prepares the data disks. Only a RAW disk is initialized and only an empty initialized
# disk is partitioned: a disk with partitions that do not match is never wiped, the step fails.
function Step-Disks {
    foreach ($want in (Get-List $Data 'disks')) {
        $name = "the disk at SCSI target $($want.target) LUN $($want.lun)"
        $disk = Find-DataDisk $want $name
        if ($disk.IsBoot -or $disk.IsSystem) {
            throw "$name is the system disk; it is never used as a data disk"
        }
        if ($disk.IsOffline) {
            Set-Disk -Number $disk.Number -IsOffline $false
        }
        if ($disk.IsReadOnly) {
            Set-Disk -Number $disk.Number -IsReadOnly $false
        }
        if ($disk.PartitionStyle -eq 'RAW') {
            Write-Log "initializing $name ($($want.partitionStyle))"
            Initialize-Disk -Number $disk.Number -PartitionStyle $want.partitionStyle
            $disk = Get-Disk -Number $disk.Number
        }
        $partition = Get-DataPartition $disk $want $name
        if ($null -eq $partition) {
            Write-Log "formatting $name ($($want.fileSystem), label '$($want.label)')"
            $partition = New-Partition -DiskNumber $disk.Number -UseMaximumSize
            $format = @{ Partition = $partition; FileSystem = $want.fileSystem; NewFileSystemLabel = $want.label; Confirm = $false }
            $unit = Get-Field $want 'allocationUnitSize'
            if ($unit) {
                $format['AllocationUnitSize'] = $unit
            }
            Format-Volume @format | Out-Null
            $partition = Get-Partition -DiskNumber $disk.Number -PartitionNumber $partition.PartitionNumber
        }
        Mount-DataPartition $partition $want $name
        Write-Log "$name is mounted"
    }
}

function Step-Containerd {
    $config = $Data.containerd
    New-Item -ItemType Directory -Force -Path $config.directory | Out-Null
    $changed = -not (Test-Path $config.configPath) -or ([IO.File]::ReadAllText($config.configPath) -ne $config.config)
    if ($changed) {
        [IO.File]::WriteAllText($config.configPath, $config.config)
    }
    # The config may hold registry credentials: only SYSTEM (containerd) and Administrators read it.
    $code = Invoke-Native 'icacls.exe' @($config.configPath, '/inheritance:r', '/grant:r', '*S-1-5-18:F', '/grant:r', '*S-1-5-32-544:F')
    if ($code -ne 0) {
        throw "icacls on $($config.configPath) exited with code $code"
    }
    # Registry folders (hosts.toml and CA files); folders of other registries are left alone.
    foreach ($file in (Get-List $config 'hosts')) {
        $bytes = [Convert]::FromBase64String($file.content)
        if ((Test-Path $file.path) -and ([Convert]::ToBase64String([IO.File]::ReadAllBytes($file.path)) -eq $file.content)) {
            continue
        }
        New-Item -ItemType Directory -Force -Path (Split-Path -Parent $file.path) | Out-Null
        [IO.File]::WriteAllBytes($file.path, $bytes)
        $changed = $true
    }
    if (-not (Get-Service -Name 'containerd' -ErrorAction SilentlyContinue)) {
        if (-not $config.register) {
            throw 'containerd is not installed: use an image with containerd or set spec.binaries.containerd'
        }
        $exe = Join-Path $config.directory 'containerd.exe'
        $code = Invoke-Native $exe @('--register-service', '--config', $config.configPath, "--log-file=$($config.logFile)")
        if ($code -ne 0) {
            throw "containerd --register-service exited with code $code"
        }
        $changed = $true
    }
    # A containerd service without --log-file logs nowhere.
    $key = 'HKLM:\SYSTEM\CurrentControlSet\Services\containerd'
    $imagePath = (Get-ItemProperty -Path $key -Name 'ImagePath').ImagePath
    if ($imagePath -notmatch '--log-file') {
        Set-ItemProperty -Path $key -Name 'ImagePath' -Value ($imagePath + ' ' + (Format-ServiceArgument "--log-file=$($config.logFile)"))
        $changed = $true
    }
    Set-ServiceEnvironment 'containerd'
    Set-Service -Name 'containerd' -StartupType Automatic
    if ($changed) {
        Restart-Service -Name 'containerd' -Force
    } else {
        Start-Service -Name 'containerd'
    }
    Register-LogRotation $config.logRotation
}

# Register-LogRotation installs capwin's static rotate-logs.ps1 with its configuration and the
# scheduled task that runs it every few minutes as SYSTEM (containerd never rotates its log).
function Register-LogRotation {
    param($Rotation)
    [IO.File]::WriteAllBytes($Rotation.scriptPath, [Convert]::FromBase64String($Rotation.script))
    $settings = [ordered]@{ files = @($Rotation.files); maxBytes = $Rotation.maxBytes; maxAgeHours = $Rotation.maxAgeHours }
    [IO.File]::WriteAllText($Rotation.configPath, (ConvertTo-Json -InputObject $settings))
    $action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument ('-NoProfile -NonInteractive -ExecutionPolicy Bypass -File "{0}"' -f $Rotation.scriptPath)
    $trigger = New-ScheduledTaskTrigger -Once -At (Get-Date) -RepetitionInterval (New-TimeSpan -Minutes $Rotation.intervalMinutes)
    Register-ScheduledTask -TaskName $Rotation.task -Action $action -Trigger $trigger -User 'SYSTEM' -RunLevel Highest -Force | Out-Null
}

function Step-Firewall {
    foreach ($rule in $Data.firewall) {
        if (-not (Get-NetFirewallRule -Name $rule.name -ErrorAction SilentlyContinue)) {
            New-NetFirewallRule -Name $rule.name -DisplayName $rule.name -Direction Inbound -Action Allow -Protocol $rule.protocol -LocalPort $rule.port | Out-Null
        }
    }
}

function Step-Defender {
    $defender = Get-Field $Data 'defender'
    if ($null -eq $defender) {
        return
    }
    if (-not (Get-Command -Name 'Add-MpPreference' -ErrorAction SilentlyContinue)) {
        Write-Log 'Microsoft Defender is not installed; no exclusions needed'
        return
    }
    try {
        Add-MpPreference -ExclusionPath $defender.paths -ExclusionProcess $defender.processes
    } catch {
        Write-Log "Defender exclusions not set: $_"
    }
}

# Join-NativeArguments quotes arguments for a process's command line.
function Join-NativeArguments {
    param([string[]]$Arguments)
    $quoted = foreach ($a in $Arguments) {
        '"' + (ConvertTo-EscapedArgument $a) + '"'
    }
    return $quoted -join ' '
}

# Step-PrePull pulls the listed images into containerd's k8s.io namespace, where the kubelet finds
# them, through the registry folders (mirrors, CAs). All pulls share one deadline; a pull that
# fails or is cut off is reported and the bootstrap goes on (the kubelet pulls it later).
function Step-PrePull {
    $pull = Get-Field $Data 'prePull'
    if ($null -eq $pull) {
        return
    }
    $images = Get-List $pull 'images'
    $deadline = (Get-Date).AddSeconds($pull.timeoutSeconds)
    $n = 0
    foreach ($image in $images) {
        $n++
        $left = [int](($deadline - (Get-Date)).TotalMilliseconds)
        if ($left -le 0) {
            Write-Log "no time left to pull $($image.ref): the kubelet pulls it when a pod needs it"
            continue
        }
        $message = 'pulling image {0} of {1}: {2}' -f $n, $images.Count, $image.ref
        Write-Log $message
        Send-Status $Step 'Running' $message
        $arguments = @('-n', 'k8s.io', 'images', 'pull', '--hosts-dir', $pull.hostsDir)
        $user = Get-Field $image 'user'
        if ($user) {
            $arguments += @('--user', $user)
        }
        $arguments += $image.ref
        $info = New-Object System.Diagnostics.ProcessStartInfo
        $info.FileName = $pull.ctr
        $info.Arguments = Join-NativeArguments $arguments
        $info.UseShellExecute = $false
        $info.RedirectStandardOutput = $true
        $info.RedirectStandardError = $true
        $process = [System.Diagnostics.Process]::Start($info)
        $stdout = $process.StandardOutput.ReadToEndAsync()
        $stderr = $process.StandardError.ReadToEndAsync()
        if (-not $process.WaitForExit($left)) {
            $process.Kill()
            Write-Log "pulling $($image.ref) did not finish in $($pull.timeoutSeconds) s: the kubelet pulls it when a pod needs it"
            continue
        }
        $errors = $stderr.Result.Trim()
        if ($process.ExitCode -ne 0) {
            Write-Log "pulling $($image.ref) failed (exit code $($process.ExitCode)): $errors"
            continue
        }
        Write-Log "pulled $($image.ref)"
        $null = $stdout.Result
    }
}

function Step-Files {
    $index = 0
    foreach ($file in (Get-List $Data 'files')) {
        $bytes = [Convert]::FromBase64String($file.content)
        New-Item -ItemType Directory -Force -Path (Split-Path -Parent $file.path) | Out-Null
        if (Get-Field $file 'append') {
            $marker = "append-$index"
            if (-not (Test-Done $marker)) {
                $stream = [IO.File]::Open($file.path, [IO.FileMode]::Append)
                try {
                    $stream.Write($bytes, 0, $bytes.Length)
                } finally {
                    $stream.Dispose()
                }
                Set-Done $marker
            }
        } else {
            [IO.File]::WriteAllBytes($file.path, $bytes)
        }
        $index++
    }
}

# Invoke-UserCommands runs the user's commands, each from its own file and once.
function Invoke-UserCommands {
    param([string]$Kind)
    $index = 0
    foreach ($command in (Get-List $Data $Kind)) {
        $marker = "$Kind-$index"
        if (-not (Test-Done $marker)) {
            [IO.File]::WriteAllBytes($command.path, [Convert]::FromBase64String($command.content))
            Write-Log "running $($command.path)"
            $code = Invoke-Native 'powershell.exe' @('-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File', $command.path)
            if ($code -ne 0) {
                throw "$($command.path) exited with code $code"
            }
            Set-Done $marker
        }
        $index++
    }
}

# Format-ServiceArgument quotes one argument of a service command line (CommandLineToArgvW rules).
function Format-ServiceArgument {
    param([string]$Value)
    if ($Value -match '=$') {
        return $Value + '""'
    }
    if ($Value -notmatch '\s') {
        return $Value
    }
    return '"' + [regex]::Replace($Value, '(\\+)$', '$1$1') + '"'
}

# Get-KubeletWrapper is what runs the kubelet on the service's command line so that its output is
# kept in a file: an image's kube-log-runner already in front of the kubelet stays as it is;
# otherwise capwin's (downloaded or on the image) with capwin's log file and rotation; without the
# program, nothing (the kubelet then keeps no log).
function Get-KubeletWrapper {
    param([string]$Existing)
    if ($Existing -match '^(?<wrapper>.*?kube-log-runner(\.exe)?"?\s.*?)\s+("[^"]*kubelet\.exe"|[^"\s]*kubelet\.exe)(\s|$)') {
        Write-Log 'the kubelet service keeps the image''s kube-log-runner'
        return $Matches['wrapper']
    }
    $runner = $Data.kubelet.logRunner
    if (-not (Test-Path $runner.binary)) {
        Write-Log "no $($runner.binary): the kubelet keeps no log file (set spec.binaries.kubeLogRunner or use an image that has it)"
        return ''
    }
    $parts = @(Format-ServiceArgument $runner.binary)
    foreach ($arg in $runner.args) {
        $parts += Format-ServiceArgument $arg
    }
    return $parts -join ' '
}

function Step-Kubelet {
    $key = 'HKLM:\SYSTEM\CurrentControlSet\Services\kubelet'
    $registered = [bool](Get-Service -Name 'kubelet' -ErrorAction SilentlyContinue)
    $existing = ''
    if ($registered) {
        $existing = (Get-ItemProperty -Path $key -Name 'ImagePath').ImagePath
    }
    $parts = @()
    $wrapper = Get-KubeletWrapper $existing
    if ($wrapper) {
        $parts += $wrapper
    }
    $parts += Format-ServiceArgument $Data.kubelet.binary
    foreach ($arg in $Data.kubelet.args) {
        $parts += Format-ServiceArgument $arg
    }
    $commandLine = $parts -join ' '
    if ($registered) {
        Set-ItemProperty -Path $key -Name 'ImagePath' -Value $commandLine
    } else {
        New-Service -Name 'kubelet' -BinaryPathName $commandLine -DisplayName 'Kubernetes kubelet' -StartupType Automatic -DependsOn 'containerd' | Out-Null
    }
    $code = Invoke-Native 'sc.exe' @('failure', 'kubelet', 'reset=', '0', 'actions=', 'restart/10000')
    if ($code -ne 0) {
        throw "sc.exe failure kubelet exited with code $code"
    }
    Set-ServiceEnvironment 'kubelet'
}

function Step-Join {
    $join = $Data.join
    if (Test-Path $join.kubeconfig) {
        Write-Log 'the node has joined already'
    } else {
        try {
            [IO.File]::WriteAllText($join.configPath, $join.config)
            $code = Invoke-Native $join.kubeadm @('join', "--config=$($join.configPath)", '--v=2')
        } finally {
            Remove-Item -Force -ErrorAction SilentlyContinue -Path $join.configPath
        }
        if ($code -ne 0) {
            throw "kubeadm join exited with code $code"
        }
    }
    Start-Service -Name 'kubelet'
}

function Step-Finish {
    Set-Content -Path $Data.paths.sentinel -Value 'success' -Encoding ASCII
    if (Get-ScheduledTask -TaskName 'capwin-bootstrap' -ErrorAction SilentlyContinue) {
        Unregister-ScheduledTask -TaskName 'capwin-bootstrap' -Confirm:$false
    }
    Remove-Item -Force -ErrorAction SilentlyContinue -Path (Join-Path $Data.paths.stateDir 'bootstrap.ps1')
    if ($Data.mode -ne 'cloudbase-init' -and $PSCommandPath) {
        # Started from a file (guest operations, PowerShell Direct): the file holds the join token.
        Remove-Item -Force -ErrorAction SilentlyContinue -Path $PSCommandPath
    }
}

$Steps = [ordered]@{
    'preflight'  = { Step-Preflight }
    'network'    = { Step-Network }
    'proxy'      = { Step-Proxy }
    'time'       = { Step-Time }
    'domain'     = { Step-Domain }
    'domainGroups' = { Step-DomainGroups }
    'users'      = { Step-Users }
    'features'   = { Step-Features }
    'downloads'  = { Step-Downloads }
    'disks'      = { Step-Disks }
    'containerd' = { Step-Containerd }
    'firewall'   = { Step-Firewall }
    'defender'   = { Step-Defender }
    'prePull'    = { Step-PrePull }
    'files'      = { Step-Files }
    'preJoin'    = { Invoke-UserCommands 'preJoin' }
    'kubelet'    = { Step-Kubelet }
    'join'       = { Step-Join }
    'postJoin'   = { Invoke-UserCommands 'postJoin' }
    'finish'     = { Step-Finish }
}

New-Item -ItemType Directory -Force -Path (Split-Path -Parent $Data.paths.logFile) | Out-Null
try {
    Protect-Directory $Data.paths.stateDir
    foreach ($name in $Steps.Keys) {
        $Step = $name
        if ($name -ne 'preflight' -and (Test-Done $name)) {
            continue
        }
        Write-Log 'starting'
        Send-Status $name 'Running' ''
        & $Steps[$name]
        Set-Done $name
    }
    $Step = 'finish'
    Write-Log 'the node has joined the cluster'
    Send-Status 'finish' 'Succeeded' 'the node has joined the cluster'
} catch {
    Write-Log "failed: $_"
    Send-Status $Step 'Failed' "$_"
    exit 1
}
exit 0
