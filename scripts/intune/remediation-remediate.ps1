# Intune Remediations remediation script (Windows), run when
# remediation-detect.ps1 exits 1: `ctrld-install install` with no token.
# ctrld-install observes the service and brings a registered service that
# does not run back with ctrld restart ("repair applied, ctrld restarted"), or
# applies a ctrld.exe its running service was not started from ("upgrade
# applied"). Without a token it never provisions: a device that needs one
# ends INSTALLER_USAGE (61), which the Win32 app's next install fixes. The
# exit status is ctrld-install's code (0 when done); the last line of its
# output, the identifier line, is what Intune shows as the remediation
# output. The log is appended to C:\ControlD\ctrld-install.log. Before it
# runs, C:\ControlD is made Administrators' and SYSTEM's only
# (Protect-Home): a home others can write is refused by ctrld-install.

$ErrorActionPreference = 'Stop'
$me = 'ctrld-install-intune'
$dest = 'C:\ControlD'
$bin = Join-Path $dest 'ctrld-install.exe'
function Fail([string]$Sentence) {
    Write-Output "${me}: error: $Sentence"
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

if (-not (Test-Path -LiteralPath $bin -PathType Leaf)) {
    Write-Output 'ctrld-install.exe is not installed'
    exit 63
}
Protect-Home $dest
$out = & $bin install --log 'C:\ControlD\ctrld-install.log' 2>&1
$code = $LASTEXITCODE
Write-Output ($out | Select-Object -Last 1)
exit $code
