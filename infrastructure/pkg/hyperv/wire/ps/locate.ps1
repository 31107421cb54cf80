# locate.ps1 asks the failover cluster which node owns a machine's role (named after the machine's
# UID): the cluster moves a VM to another node on a node failure or a live migration, and any node
# can tell where it went. Get-ClusterGroup's OwnerNode is a ClusterNode, see
# https://learn.microsoft.com/powershell/module/failoverclusters/get-clustergroup.
param($In)
Assert-CapwinCluster $In | Out-Null
$group = Get-ClusterGroup -Name $In.uid -ErrorAction SilentlyContinue
if ($null -eq $group) {
    return @{ found = $false; node = ''; state = '' }
}
return @{ found = $true; node = "$($group.OwnerNode.Name)"; state = "$($group.State)" }
