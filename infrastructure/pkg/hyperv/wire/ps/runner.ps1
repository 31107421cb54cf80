$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$Envelope = [Text.Encoding]::UTF8.GetString([Convert]::FromBase64String([Console]::In.ReadToEnd().Trim())) | ConvertFrom-Json
$CapwinNonce = [string]$Envelope.nonce
. ([ScriptBlock]::Create($Envelope.lib))
Invoke-CapwinOperation ([ScriptBlock]::Create($Envelope.script)) $Envelope.input
