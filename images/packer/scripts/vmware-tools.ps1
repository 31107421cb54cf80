# VMware Tools' guestinfo settings (vSphere): the node's container and CNI adapters are left out of
# the addresses Tools reports, so the provider reads the node's own (docs/vcenter/templates.md).
# Tools itself was installed from its ISO by the answer file's first logon.
. 'C:\Windows\Temp\capwin-image\common.ps1'
$service = Get-Service -Name VMTools -ErrorAction SilentlyContinue
if (-not $service -or $service.Status -ne 'Running') { throw 'VMware Tools does not run' }
$dir = Join-Path $env:ProgramData 'VMware\VMware Tools'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
Set-Content -LiteralPath (Join-Path $dir 'tools.conf') -Encoding ASCII -Value @(
    '[guestinfo]', 'exclude-nics=vEthernet*,cali*,flannel*,vxlan*,HNS*')
Restart-Service -Name VMTools
