# Generic RMM script for Windows (Datto RMM component, NinjaOne, N-able, ...;
# run as SYSTEM): provisions ctrld with C:\ControlD\ctrld-install.exe, which
# the ctrld package or an earlier step put there, with ctrld.exe beside it.
#
# Script or component variables, which arrive as environment variables:
#   CTRLD_PROVISION_TOKEN       provisioning token (this or the resolver ID;
#                               neither for the daily repair job)
#   CTRLD_PROVISION_RESOLVER    resolver ID instead of a token; a secret too
#   CTRLD_START_FLAGS           extra flags for ctrld start, separated by spaces
#   CTRLD_INSTALL_TIMEOUT       ctrld-install's budget for the run (default 5m)
#   CTRLD_INSTALL_RETRIES       extra attempts for retryable codes (default 2)
#   CTRLD_INSTALL_MIN_VERSION   refuse a ctrld older than this version
#   CTRLD_INSTALL_FORCE         yes: provision even when ctrld is healthy
#   CTRLD_INSTALL_EXIT_PROFILE  default, intune, filewave or jamf
# The token or resolver ID is taken out of the environment and written to
# ctrld-install's standard input (--token-stdin, --resolver-stdin): it is on
# no command line and in no file. A setting that is not understood ends the
# run before ctrld-install starts ("ctrld-install: error: <which variable>"
# on stderr, the INSTALLER_USAGE line last on stdout, exit 61).
#
# Without a token or resolver ID it is the daily repair job: ctrld-install
# brings back a registered service that stopped, applies a new ctrld.exe
# and otherwise does nothing; it never provisions. On a device with no ctrld
# service it can do nothing, and ctrld-install ends with INSTALLER_USAGE
# (exit 61, "no token given" on stderr): that device needs a run with the
# token.
#
# Before ctrld-install runs, C:\ControlD is made Administrators' and
# SYSTEM's only (see Protect-Home). Exit status: ctrld-install's, under the
# jamf profile unless CTRLD_INSTALL_EXIT_PROFILE says otherwise: 0 also for
# a device managed under another deactivation PIN. Lines also go to
# C:\ProgramData\ControlD\ctrld-install.log; the script makes that folder
# writable by SYSTEM and Administrators only (C:\ProgramData lets every
# user create folders, so one a user made first is taken over).

$ErrorActionPreference = 'Stop'
$me = 'ctrld-install-rmm'
$dest = 'C:\ControlD'
$bin = Join-Path $dest 'ctrld-install.exe'
$logDir = Join-Path $env:ProgramData 'ControlD'

function Stop-Usage([string]$Sentence) {
    [Console]::Error.WriteLine("ctrld-install: error: $Sentence")
    [Console]::Out.WriteLine('ctrld-install: provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)')
    exit 61
}
function Fail([string]$Sentence) {
    [Console]::Error.WriteLine("${me}: error: $Sentence")
    exit 60
}

# --- home: this block is the same in every PowerShell script that runs ctrld-install install ---
# C:\ lets every user create folders, so a C:\ControlD that a user made, or
# that was made by copying files in (it then inherits "Authenticated Users:
# Modify" from C:\), would let a user replace what SYSTEM runs; ctrld-install
# refuses such a home. Protect-Home makes the folder, or takes it over,
# before ctrld-install runs: inheritance off, exactly Administrators and
# SYSTEM with full control, everything inside owned by Administrators and
# inheriting only that, in this order so that whatever a user drops in
# between is taken over by the last two steps. icacls rather than Set-Acl,
# because it enables the privilege that taking ownership needs.
function Protect-Home([string]$Dir) {
    if (Test-Path -LiteralPath $Dir) {
        $item = Get-Item -LiteralPath $Dir -Force
        if (-not $item.PSIsContainer -or ($item.Attributes -band [IO.FileAttributes]::ReparsePoint)) {
            Fail "$Dir is a file or a link, not a folder; remove it and run again"
        }
    } else {
        New-Item -ItemType Directory -Path $Dir | Out-Null
    }
    & icacls.exe $Dir /reset /C /Q | Out-Null
    if ($LASTEXITCODE -ne 0) { Fail "cannot reset the permissions of $Dir" }
    & icacls.exe $Dir /inheritance:r /grant:r '*S-1-5-32-544:(OI)(CI)F' '*S-1-5-18:(OI)(CI)F' | Out-Null
    if ($LASTEXITCODE -ne 0) { Fail "cannot set the permissions of $Dir" }
    & icacls.exe $Dir /setowner '*S-1-5-32-544' /T /C /Q | Out-Null
    if ($LASTEXITCODE -ne 0) { Fail "cannot make Administrators the owner of $Dir and its files" }
    foreach ($child in @(Get-ChildItem -LiteralPath $Dir -Force)) {
        & icacls.exe $child.FullName /reset /T /C /Q | Out-Null
        if ($LASTEXITCODE -ne 0) { Fail "cannot reset the permissions of the files in $Dir" }
    }
}
# --- end of the home block ---

# Read once, then out of the environment: ctrld-install and ctrld inherit
# nothing secret.
$token = $env:CTRLD_PROVISION_TOKEN
$resolver = $env:CTRLD_PROVISION_RESOLVER
$startFlags = $env:CTRLD_START_FLAGS
foreach ($name in 'CTRLD_PROVISION_TOKEN', 'CTRLD_PROVISION_RESOLVER', 'CTRLD_START_FLAGS') {
    if (Test-Path -LiteralPath "Env:\$name") { Remove-Item -LiteralPath "Env:\$name" }
}

# A device managed under another deactivation PIN is settled: the jamf
# profile exits 0 for it, so the tool's daily run does not fail on what no
# run can change. The line and the record still say DEACTIVATION_PIN_REQUIRED.
$profileName = $env:CTRLD_INSTALL_EXIT_PROFILE
if (-not $profileName) { $profileName = 'jamf' }
if ($profileName -notin 'default', 'intune', 'filewave', 'jamf') { Stop-Usage 'CTRLD_INSTALL_EXIT_PROFILE must be one of default, intune, filewave, jamf' }
$argv = @('--exit-profile', $profileName)
$argv += @('--log', (Join-Path $logDir 'ctrld-install.log'))
if ($env:CTRLD_INSTALL_TIMEOUT) {
    if ($env:CTRLD_INSTALL_TIMEOUT -notmatch '^[0-9][0-9.hmnsu]*[hms]$') { Stop-Usage 'CTRLD_INSTALL_TIMEOUT needs a duration such as 90s or 10m' }
    $argv += @('--timeout', $env:CTRLD_INSTALL_TIMEOUT)
}
if ($env:CTRLD_INSTALL_RETRIES) {
    if ($env:CTRLD_INSTALL_RETRIES -notmatch '^[0-9]+$') { Stop-Usage 'CTRLD_INSTALL_RETRIES needs a whole number such as 2' }
    $argv += @('--retries', $env:CTRLD_INSTALL_RETRIES)
}
if ($env:CTRLD_INSTALL_MIN_VERSION) {
    if ($env:CTRLD_INSTALL_MIN_VERSION -notmatch '^v?[0-9][0-9A-Za-z.+-]*$') { Stop-Usage 'CTRLD_INSTALL_MIN_VERSION needs a version such as 1.5.0' }
    $argv += @('--min-version', $env:CTRLD_INSTALL_MIN_VERSION)
}
if ($env:CTRLD_INSTALL_FORCE) {
    if ($env:CTRLD_INSTALL_FORCE -notin 'yes', 'true', '1', 'no', 'false', '0') { Stop-Usage 'CTRLD_INSTALL_FORCE must be yes or no' }
    if ($env:CTRLD_INSTALL_FORCE -in 'yes', 'true', '1') { $argv += '--force' }
}
if ($token -and $resolver) { Stop-Usage 'CTRLD_PROVISION_TOKEN and CTRLD_PROVISION_RESOLVER exclude each other; set one of them' }
# No secret, no secret flag: ctrld-install then repairs or does nothing,
# and says itself when the device needs the token.
$secret = $null
if ($token) {
    $secret = $token
    $argv += '--token-stdin'
} elseif ($resolver) {
    $secret = $resolver
    $argv += '--resolver-stdin'
}
if ($secret -and ($secret.Contains("`n") -or $secret.Contains("`r"))) { Stop-Usage 'the token or resolver ID holds more than one line' }
if ($startFlags) {
    $argv += '--'
    $argv += @($startFlags -split '\s+' | Where-Object { $_ })
}
if (-not (Test-Path -LiteralPath $bin -PathType Leaf)) { Fail "ctrld-install is not installed at $bin; install the ctrld package first" }
Protect-Home $dest

# The log folder: no explicit entry left, inheritance off, SYSTEM and
# Administrators full control, Users read; everything in it owned by
# Administrators and inheriting only that.
if (Test-Path -LiteralPath $logDir) {
    $item = Get-Item -LiteralPath $logDir -Force
    if (-not $item.PSIsContainer -or ($item.Attributes -band [IO.FileAttributes]::ReparsePoint)) {
        Fail "$logDir is a file or a link, not a folder; remove it and run again"
    }
} else {
    New-Item -ItemType Directory -Path $logDir | Out-Null
}
& icacls.exe $logDir /reset /C /Q | Out-Null
if ($LASTEXITCODE -ne 0) { Fail "cannot reset the permissions of $logDir" }
& icacls.exe $logDir /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' '*S-1-5-32-545:(OI)(CI)RX' | Out-Null
if ($LASTEXITCODE -ne 0) { Fail "cannot set the permissions of $logDir" }
& icacls.exe $logDir /setowner '*S-1-5-32-544' /T /C /Q | Out-Null
if ($LASTEXITCODE -ne 0) { Fail "cannot make Administrators the owner of $logDir and its files" }
foreach ($child in @(Get-ChildItem -LiteralPath $logDir -Force)) {
    & icacls.exe $child.FullName /reset /T /C /Q | Out-Null
    if ($LASTEXITCODE -ne 0) { Fail "cannot reset the permissions of the files in $logDir" }
}

# The secret on standard input, as UTF-8 without a byte order mark.
if ($secret) {
    $OutputEncoding = New-Object System.Text.UTF8Encoding $false
    $secret | & $bin @argv
} else {
    & $bin @argv
}
$status = $LASTEXITCODE
$secret = $null
$token = $null
$resolver = $null
exit $status
