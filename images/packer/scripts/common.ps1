# Shared by the image's provisioning scripts (dot-sourced). The settings are one JSON document that
# Packer writes from its variables (settings.json next to this file): values are data, never code.
Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'

$CapwinImageDir = 'C:\Windows\Temp\capwin-image'

function Get-CapwinImageSettings {
    Get-Content -Raw -LiteralPath (Join-Path $CapwinImageDir 'settings.json') | ConvertFrom-Json
}

# Get-CapwinFile copies or downloads Source (an http(s) URL, or a path such as \\share\dir\file on
# an air-gapped site's own share) to Path, and keeps it only when its SHA-256 is Checksum.
function Get-CapwinFile {
    param(
        [Parameter(Mandatory)] [string] $Source,
        [Parameter(Mandatory)] [string] $Checksum,
        [Parameter(Mandatory)] [string] $Path
    )
    $partial = "$Path.partial"
    for ($try = 1; ; $try++) {
        try {
            if ($Source -match '^https?://') {
                Invoke-WebRequest -UseBasicParsing -Uri $Source -OutFile $partial
            } else {
                Copy-Item -LiteralPath $Source -Destination $partial -Force
            }
            break
        } catch {
            if ($try -ge 5) { throw "fetching $Source failed 5 times: $_" }
            Start-Sleep -Seconds (5 * $try)
        }
    }
    $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $partial).Hash
    if ($got -ne $Checksum.ToUpperInvariant()) {
        Remove-Item -LiteralPath $partial -Force
        throw "$Source has SHA-256 $got, want ${Checksum}: not used"
    }
    Move-Item -LiteralPath $partial -Destination $Path -Force
}

function Write-CapwinStep([string] $Message) {
    Write-Host "capwin-image: $Message"
}
