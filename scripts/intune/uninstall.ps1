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
# Runs C:\ControlD\ctrld-install.exe uninstall with the default exit
# profile, so a missing or wrong PIN (126) fails the uninstall, and exits
# with its status: 0 when ctrld is gone ("uninstall succeeded") or was never
# there ("not installed, nothing to do"). Without ctrld-install.exe (an
# earlier run removed it, or an old package laid only ctrld.exe) it runs
# ctrld.exe's own uninstall and checks the service is gone (see
# Remove-CtrldAlone). After 0 it also deletes ctrld-install's
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
$dest = 'C:\ControlD'
$bin = Join-Path $dest 'ctrld-install.exe'
$log = Join-Path $env:ProgramData 'Microsoft\IntuneManagementExtension\Logs\ctrld-install.log'

# --- ctrld without ctrld-install: this block is the same in every PowerShell uninstall script ---
# A device can have ctrld.exe and no ctrld-install.exe: an older package
# laid only ctrld, or an earlier run of this script removed ctrld-install
# after ctrld uninstall succeeded. Remove-CtrldAlone then runs the
# uninstall ctrld-install would have run, in the form the installed release
# takes (ctrld before 1.3.0: "service uninstall", no --pin, no --cleanup),
# and makes the same check (the ctrld service is gone), so a second
# uninstall is "nothing to do", not a failure. ctrld's own output is not
# shown: a released ctrld can print its token.
function Stop-Alone([string]$Code, [int]$Exit, [string]$NextStep) {
    [Console]::Out.WriteLine("ctrld-install: next step: $NextStep")
    [Console]::Out.WriteLine("ctrld-install: uninstall failed: stage=service code=$Code (exit $Exit)")
    exit $Exit
}
function Remove-CtrldAlone([string]$Pin, [bool]$Cleanup) {
    if ($null -eq (Get-CimInstance -ClassName Win32_Service -Filter "Name='ctrld'")) {
        [Console]::Out.WriteLine('ctrld-install: not installed, nothing to do (exit 0)')
        exit 0
    }
    $ctrld = Join-Path $dest 'ctrld.exe'
    if (-not (Test-Path -LiteralPath $ctrld -PathType Leaf)) {
        Stop-Alone 'SERVICE_UNINSTALL_FAILED' 56 "The ctrld service is registered but no $ctrld can remove it: remove it with sc.exe delete ctrld."
    }
    # A native command's stderr must not stop the script here.
    $ErrorActionPreference = 'Continue'
    $version = "$(& $ctrld --version 2>$null | Select-Object -First 1)" -replace '^.* v?', ''
    if ($version -match '^(0\.|1\.[0-2]([^0-9]|$))') {
        $cargs = @('service', 'uninstall')
    } else {
        $cargs = @('uninstall')
        if ($Pin) { $cargs += @('--pin', $Pin) }
        if ($Cleanup) { $cargs += '--cleanup' }
    }
    & $ctrld @cargs *> $null
    $code = $LASTEXITCODE
    if ($code -eq 126) {
        Stop-Alone 'DEACTIVATION_PIN_REQUIRED' 126 "Give this script ctrld's deactivation PIN (a PIN that was given is not the one this ctrld was provisioned with), then run the uninstall again."
    }
    if ($null -ne (Get-CimInstance -ClassName Win32_Service -Filter "Name='ctrld'")) {
        Stop-Alone 'SERVICE_UNINSTALL_FAILED' 56 'Remove the service with sc.exe delete ctrld and report the ctrld version to Support.'
    }
    [Console]::Out.WriteLine('ctrld-install: uninstall succeeded (exit 0)')
    exit 0
}
# --- end of the ctrld without ctrld-install block ---

if ($Timeout -and $Timeout -notmatch '^[0-9][0-9.hmnsu]*[hms]$') {
    [Console]::Error.WriteLine('ctrld-install: error: -Timeout needs a duration such as 90s or 10m')
    [Console]::Out.WriteLine('ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)')
    exit 61
}
if (-not (Test-Path -LiteralPath $bin -PathType Leaf)) {
    $pinFile = Join-Path $PSScriptRoot 'deactivation_pin'
    $alonePin = ''
    if (Test-Path -LiteralPath $pinFile -PathType Leaf) { $alonePin = "$(Get-Content -LiteralPath $pinFile -TotalCount 1)".Trim() }
    Remove-CtrldAlone $alonePin ([bool]$Cleanup)
}

# The default profile: a missing or wrong PIN leaves ctrld in place and
# must fail the uninstall (the intune profile would exit 0 for it).
$argv = @('uninstall', '--log', $log)
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
