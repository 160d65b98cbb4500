# Intune Win32 app install script. Install command, with the settings you
# need (all optional):
#   powershell.exe -NoProfile -ExecutionPolicy Bypass -File .\install.ps1
#   powershell.exe -NoProfile -ExecutionPolicy Bypass -File .\install.ps1 -Timeout 10m -Retries 2 -Force -StartFlags "--custom-hostname=pc-1"
#
#   -Timeout D      ctrld-install's budget for the whole run (default 5m)
#   -Retries N      extra attempts for retryable codes (default 2)
#   -MinVersion V   refuse a ctrld older than V
#   -Force          provision even when ctrld is healthy (after the token or
#                   the flags changed); see docs/mdm/intune.md
#   -StartFlags S   extra flags for ctrld start, separated by spaces
#
# The install command is shown in the Intune portal and written to the
# Intune Management Extension's logs, so no secret goes there: the
# .intunewin holds this script, ctrld.exe, ctrld-install.exe and either
# provision_token (the organisation's token on its first line) or
# provision_resolver (a resolver ID), which ctrld-install reads itself
# (--token-file, --resolver-file). The .intunewin is then a secret of the
# organisation.
#
# What it does, in order, and fails loudly (one line on stderr, exit 60)
# when a step cannot be done:
#   1. C:\ControlD, ctrld's home, from which its service runs as SYSTEM:
#      owner Administrators, inheritance off, SYSTEM and Administrators full
#      control, nothing else, on the folder and on everything already in it
#      (Protect-Home);
#   2. stops the ctrld service if it runs (a running ctrld.exe cannot be
#      replaced), copies ctrld.exe and ctrld-install.exe there, and starts
#      the service again;
#   3. runs ctrld-install with the intune exit profile (retryable codes exit
#      1618, which Intune retries; a ctrld managed under another deactivation
#      PIN exits 0, and detection then finds it running) and exits with its
#      status.
# ctrld-install's lines also go to
# C:\ProgramData\Microsoft\IntuneManagementExtension\Logs\ctrld-install.log,
# which Intune's "Collect diagnostics" device action fetches with its own
# logs.

[CmdletBinding()]
param(
    [string]$Timeout = '',
    [string]$Retries = '',
    [string]$MinVersion = '',
    [switch]$Force,
    [string]$StartFlags = ''
)

$ErrorActionPreference = 'Stop'
$me = 'ctrld-install-intune'
$dest = 'C:\ControlD'
$logDir = Join-Path $env:ProgramData 'Microsoft\IntuneManagementExtension\Logs'
$log = Join-Path $logDir 'ctrld-install.log'

function Fail([string]$Sentence) {
    [Console]::Error.WriteLine("${me}: error: $Sentence")
    exit 60
}

# A setting that is not understood ends the run the way ctrld-install ends
# a usage error. The sentence names the setting, never its value.
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

function Stop-Usage([string]$Sentence) {
    [Console]::Error.WriteLine("ctrld-install: error: $Sentence")
    [Console]::Out.WriteLine('ctrld-install: provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)')
    exit 61
}

if ($Timeout -and $Timeout -notmatch '^[0-9][0-9.hmnsu]*[hms]$') { Stop-Usage '-Timeout needs a duration such as 90s or 10m' }
if ($Retries -and $Retries -notmatch '^[0-9]+$') { Stop-Usage '-Retries needs a whole number such as 2' }
if ($MinVersion -and $MinVersion -notmatch '^v?[0-9][0-9A-Za-z.+-]*$') { Stop-Usage '-MinVersion needs a version such as 1.5.0' }
$tokenFile = Join-Path $PSScriptRoot 'provision_token'
$resolverFile = Join-Path $PSScriptRoot 'provision_resolver'
$hasToken = Test-Path -LiteralPath $tokenFile -PathType Leaf
$hasResolver = Test-Path -LiteralPath $resolverFile -PathType Leaf
if ($hasToken -and $hasResolver) { Stop-Usage 'the package holds both provision_token and provision_resolver; keep one of them' }
if (-not ($hasToken -or $hasResolver)) { Stop-Usage 'no token: put provision_token (or provision_resolver) in the .intunewin' }

# 1. The home (see Protect-Home).
Protect-Home $dest
New-Item -ItemType Directory -Force -Path $logDir | Out-Null

# 2. The binaries. The service runs the ctrld.exe it was started from, and
# Intune deletes the package's folder afterwards, so both move to the home.
$service = Get-CimInstance -ClassName Win32_Service -Filter "Name='ctrld'"
$wasRunning = $null -ne $service -and $service.State -eq 'Running'
if ($wasRunning) {
    try {
        Stop-Service -Name 'ctrld' -Force
    } catch {
        Fail 'cannot stop the ctrld service to replace its binary (a deactivation PIN keeps it running?)'
    }
}
foreach ($name in 'ctrld.exe', 'ctrld-install.exe') {
    $from = Join-Path $PSScriptRoot $name
    if (-not (Test-Path -LiteralPath $from -PathType Leaf)) { Fail "$name is missing from the package" }
    $to = Join-Path $dest $name
    # A link in its place would send the copy elsewhere: remove the link.
    if ((Test-Path -LiteralPath $to) -and ((Get-Item -LiteralPath $to -Force).Attributes -band [IO.FileAttributes]::ReparsePoint)) {
        Remove-Item -LiteralPath $to -Force
    }
    # The stopped service's process may take a moment to release the file.
    $copied = $false
    for ($try = 1; $try -le 10 -and -not $copied; $try++) {
        try {
            Copy-Item -LiteralPath $from -Destination $to -Force
            $copied = $true
        } catch {
            Start-Sleep -Seconds 1
        }
    }
    if (-not $copied) { Fail "cannot replace $dest\$name; a process still holds it" }
}
if ($wasRunning) {
    try {
        Start-Service -Name 'ctrld'
    } catch {
        # Not fatal: ctrld-install finds the service stopped and provisions.
        [Console]::Error.WriteLine("${me}: the ctrld service did not start again; ctrld-install provisions it")
    }
}

# 3. ctrld-install.
$argv = @('--exit-profile', 'intune', '--log', $log)
if ($Timeout) { $argv += @('--timeout', $Timeout) }
if ($Retries) { $argv += @('--retries', $Retries) }
if ($MinVersion) { $argv += @('--min-version', $MinVersion) }
if ($Force) { $argv += '--force' }
if ($hasToken) {
    $argv += @('--token-file', $tokenFile)
} else {
    $argv += @('--resolver-file', $resolverFile)
}
if ($StartFlags) {
    $argv += '--'
    $argv += @($StartFlags -split '\s+' | Where-Object { $_ })
}
& (Join-Path $dest 'ctrld-install.exe') @argv
exit $LASTEXITCODE
