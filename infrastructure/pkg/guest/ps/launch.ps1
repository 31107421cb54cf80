# capwin guest launcher. This file is static: every value comes from $CapwinLaunch, the base64
# JSON document assigned on the line above. capwin copies it, with the bootstrap script, into a
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

# Set-Network gives each adapter, found by MAC, its static addresses, routes (the default ones
# included), DNS servers and MTU, then sets the DNS suffix search list. Adapters without static
# addresses keep DHCP. Every step checks before it changes, so a second run changes nothing.
function Set-Network {
    foreach ($nic in $Launch.network) {
        $adapter = Get-NetAdapter | Where-Object { $_.MacAddress -eq $nic.mac } | Select-Object -First 1
        if ($null -eq $adapter) {
            throw "no network adapter has the MAC address $($nic.mac)"
        }
        $index = $adapter.ifIndex
        foreach ($cidr in $nic.addresses) {
            $parts = $cidr.Split('/')
            $family = 'IPv4'
            if ($parts[0].Contains(':')) {
                $family = 'IPv6'
            }
            Set-NetIPInterface -InterfaceIndex $index -AddressFamily $family -Dhcp Disabled
            if (-not (Get-NetIPAddress -InterfaceIndex $index -IPAddress $parts[0] -ErrorAction SilentlyContinue)) {
                New-NetIPAddress -InterfaceIndex $index -IPAddress $parts[0] -PrefixLength ([int]$parts[1]) | Out-Null
            }
        }
        Set-Routes -Index $index -Routes $nic.routes
        if ($nic.nameservers.Count -gt 0) {
            Set-DnsClientServerAddress -InterfaceIndex $index -ServerAddresses $nic.nameservers
        }
        if ($nic.mtu -gt 0) {
            Set-Mtu -Index $index -Mtu $nic.mtu
        }
        Write-Log "adapter $($adapter.Name) ($($nic.mac)): $($nic.addresses -join ', ')"
    }
    if ($Launch.searchDomains.Count -gt 0) {
        # Windows has one suffix search list for the computer; a NIC holds only one suffix.
        Set-DnsClientGlobalSetting -SuffixSearchList $Launch.searchDomains
        Write-Log "DNS suffix search list: $($Launch.searchDomains -join ', ')"
    }
}

# Set-Routes adds the routes the adapter lacks and corrects the metric of those it has.
function Set-Routes {
    param([int]$Index, [object[]]$Routes)
    foreach ($route in $Routes) {
        $existing = Get-NetRoute -InterfaceIndex $Index -DestinationPrefix $route.to -NextHop $route.via -ErrorAction SilentlyContinue
        if ($null -eq $existing) {
            if ($route.metric -gt 0) {
                New-NetRoute -InterfaceIndex $Index -DestinationPrefix $route.to -NextHop $route.via -RouteMetric $route.metric | Out-Null
            } else {
                New-NetRoute -InterfaceIndex $Index -DestinationPrefix $route.to -NextHop $route.via | Out-Null
            }
        } elseif ($route.metric -gt 0 -and ($existing | Where-Object { $_.RouteMetric -ne $route.metric })) {
            Set-NetRoute -InterfaceIndex $Index -DestinationPrefix $route.to -NextHop $route.via -RouteMetric $route.metric
        }
    }
}

# Set-Mtu sets the adapter's IPv4 MTU, and its IPv6 MTU when IPv6 is bound and the value is at
# least IPv6's minimum of 1280 bytes (Windows refuses less).
function Set-Mtu {
    param([int]$Index, [int]$Mtu)
    Set-NetIPInterface -InterfaceIndex $Index -AddressFamily IPv4 -NlMtuBytes $Mtu
    if ($Mtu -ge 1280 -and (Get-NetIPInterface -InterfaceIndex $Index -AddressFamily IPv6 -ErrorAction SilentlyContinue)) {
        Set-NetIPInterface -InterfaceIndex $Index -AddressFamily IPv6 -NlMtuBytes $Mtu
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
    Set-Network
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
