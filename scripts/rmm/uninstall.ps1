# Generic RMM script for Windows (run as SYSTEM): removes ctrld with
# C:\ControlD\ctrld-install.exe uninstall, then ctrld-install's own files.
#
# Script or component variables, which arrive as environment variables:
#   CTRLD_DEACTIVATION_PIN    ctrld's deactivation PIN, digits only, when
#                             ctrld runs with one; a secret
#   CTRLD_INSTALL_TIMEOUT     ctrld-install's budget for the run
#   CTRLD_UNINSTALL_CLEANUP   yes: also pass --cleanup to ctrld uninstall
# The PIN is taken out of the environment and written to ctrld-install's
# standard input (--pin-stdin): it is on no command line and in no file.
#
# Exit status: ctrld-install's, default profile: 0 when ctrld is gone or
# was never there, 126 for a missing or wrong PIN (DEACTIVATION_PIN_REQUIRED),
# 56 when ctrld stays (SERVICE_UNINSTALL_FAILED). After 0 the script deletes
# C:\ControlD\ctrld-install.exe, its outcome record, lock and run witness, and
# C:\ProgramData\ControlD\ctrld-install.log; after a failure it keeps them.

$ErrorActionPreference = 'Stop'
$me = 'ctrld-install-rmm'
$dest = 'C:\ControlD'
$bin = Join-Path $dest 'ctrld-install.exe'
$log = Join-Path $env:ProgramData 'ControlD\ctrld-install.log'

function Stop-Usage([string]$Sentence) {
    [Console]::Error.WriteLine("ctrld-install: error: $Sentence")
    [Console]::Out.WriteLine('ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)')
    exit 61
}

$pin = $env:CTRLD_DEACTIVATION_PIN
if (Test-Path -LiteralPath 'Env:\CTRLD_DEACTIVATION_PIN') { Remove-Item -LiteralPath 'Env:\CTRLD_DEACTIVATION_PIN' }
$argv = @('uninstall', '--log', $log)
if ($env:CTRLD_INSTALL_TIMEOUT) {
    if ($env:CTRLD_INSTALL_TIMEOUT -notmatch '^[0-9][0-9.hmnsu]*[hms]$') { Stop-Usage 'CTRLD_INSTALL_TIMEOUT needs a duration such as 90s or 10m' }
    $argv += @('--timeout', $env:CTRLD_INSTALL_TIMEOUT)
}
if ($env:CTRLD_UNINSTALL_CLEANUP) {
    if ($env:CTRLD_UNINSTALL_CLEANUP -notin 'yes', 'true', '1', 'no', 'false', '0') { Stop-Usage 'CTRLD_UNINSTALL_CLEANUP must be yes or no' }
    if ($env:CTRLD_UNINSTALL_CLEANUP -in 'yes', 'true', '1') { $argv += '--cleanup' }
}
if ($pin -and $pin -notmatch '^[0-9]+$') { Stop-Usage 'CTRLD_DEACTIVATION_PIN must be digits only' }
if (-not (Test-Path -LiteralPath $bin -PathType Leaf)) {
    [Console]::Error.WriteLine("${me}: error: ctrld-install is not installed at $bin; nothing here can run ctrld uninstall")
    exit 60
}

if ($pin) {
    $argv += '--pin-stdin'
    $OutputEncoding = New-Object System.Text.UTF8Encoding $false
    $pin | & $bin @argv
} else {
    & $bin @argv
}
$status = $LASTEXITCODE
$pin = $null
if ($status -eq 0) {
    foreach ($path in $bin, (Join-Path $dest 'ctrld-install-result.json'), (Join-Path $dest '.ctrld-install.lock'), (Join-Path $dest '.ctrld-install.running'), $log, "$log.1") {
        if (Test-Path -LiteralPath $path) { Remove-Item -LiteralPath $path -Force }
    }
}
exit $status
