# capwin guest network settings. This file is static and shared: capwin's launcher (launch.ps1,
# infrastructure provider) and the bootstrap script's network step (bootstrap.ps1, bootstrap
# provider) both start with it. Every value comes from the network document passed as $Config
# (its fields network and searchDomains; the launcher's document carries them too). The script
# that includes this file defines Write-Log. Every step checks before it changes, so a second run
# (the launcher, then the bootstrap's network step) changes nothing.

# Set-Network gives each adapter, found by MAC, its static addresses, routes (the default ones
# included), DNS servers and MTU, then sets the DNS suffix search list. Adapters without static
# addresses keep DHCP.
function Set-Network {
    param($Config)
    foreach ($nic in $Config.network) {
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
    if ($Config.searchDomains.Count -gt 0) {
        # Windows has one suffix search list for the computer; a NIC holds only one suffix.
        Set-DnsClientGlobalSetting -SuffixSearchList $Config.searchDomains
        Write-Log "DNS suffix search list: $($Config.searchDomains -join ', ')"
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

