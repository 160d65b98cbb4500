# Intune Win32 app uninstall script. Uninstall command:
#   powershell.exe -NoProfile -ExecutionPolicy Bypass -File .\uninstall.ps1
#   powershell.exe -NoProfile -ExecutionPolicy Bypass -File .\uninstall.ps1 -Timeout 2m -Cleanup
#
#   -Timeout D   ctrld-install's budget for the whole run
#   -Cleanup     also pass --cleanup to ctrld uninstall
#
# ctrld's deactivation PIN, when it runs with one, is a file
# deactivation_pin in the .intunewin (the PIN on its first line), read by
# ctrld-install itself (--pin-file): never on the uninstall command, which
# Intune shows in the portal and writes to its logs. Without the file and
# with a PIN set, the result is DEACTIVATION_PIN_REQUIRED (126).
#
# Runs C:\ControlD\ctrld-install.exe uninstall with the intune exit profile
# (retryable codes exit 1618, which Intune retries) and exits with its
# status: 0 when ctrld is gone ("uninstall succeeded") or was never there
# ("not installed, nothing to do"). After 0 it also deletes ctrld-install's
# own files: C:\ControlD\ctrld-install.exe, its outcome record, lock and run witness, and
# its log in C:\ProgramData\Microsoft\IntuneManagementExtension\Logs.
# After a failure it keeps them, so the log and the record tell what
# happened.

[CmdletBinding()]
param(
    [string]$Timeout = '',
    [switch]$Cleanup
)

$ErrorActionPreference = 'Stop'
$me = 'ctrld-install-intune'
$dest = 'C:\ControlD'
$bin = Join-Path $dest 'ctrld-install.exe'
$log = Join-Path $env:ProgramData 'Microsoft\IntuneManagementExtension\Logs\ctrld-install.log'

if ($Timeout -and $Timeout -notmatch '^[0-9][0-9.hmnsu]*[hms]$') {
    [Console]::Error.WriteLine('ctrld-install: error: -Timeout needs a duration such as 90s or 10m')
    [Console]::Out.WriteLine('ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)')
    exit 61
}
if (-not (Test-Path -LiteralPath $bin -PathType Leaf)) {
    [Console]::Error.WriteLine("${me}: error: ctrld-install is not installed at $bin; nothing here can run ctrld uninstall")
    exit 60
}

$argv = @('uninstall', '--exit-profile', 'intune', '--log', $log)
if ($Timeout) { $argv += @('--timeout', $Timeout) }
if ($Cleanup) { $argv += '--cleanup' }
$pinFile = Join-Path $PSScriptRoot 'deactivation_pin'
if (Test-Path -LiteralPath $pinFile -PathType Leaf) { $argv += @('--pin-file', $pinFile) }
& $bin @argv
$status = $LASTEXITCODE
if ($status -eq 0) {
    foreach ($path in $bin, (Join-Path $dest 'ctrld-install-result.json'), (Join-Path $dest '.ctrld-install.lock'), (Join-Path $dest '.ctrld-install.running'), $log, "$log.1") {
        if (Test-Path -LiteralPath $path) { Remove-Item -LiteralPath $path -Force }
    }
}
exit $status
