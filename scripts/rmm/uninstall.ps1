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
# Without ctrld-install.exe (an earlier run removed it, or an old package
# laid only ctrld.exe) it runs ctrld.exe's own uninstall and checks the
# service is gone (Remove-CtrldAlone): a second run is "nothing to do".

$ErrorActionPreference = 'Stop'
$dest = 'C:\ControlD'
$bin = Join-Path $dest 'ctrld-install.exe'
$log = Join-Path $env:ProgramData 'ControlD\ctrld-install.log'

function Stop-Usage([string]$Sentence) {
    [Console]::Error.WriteLine("ctrld-install: error: $Sentence")
    [Console]::Out.WriteLine('ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)')
    exit 61
}

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
    Remove-CtrldAlone $pin ($env:CTRLD_UNINSTALL_CLEANUP -in 'yes', 'true', '1')
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
