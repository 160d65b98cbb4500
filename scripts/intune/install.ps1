# Intune Win32 app install script. Install command:
#   powershell.exe -NoProfile -ExecutionPolicy Bypass -File .\install.ps1
# The .intunewin package holds this script, ctrld.exe, ctrld-install.exe and,
# for a per-organisation package, provision_token (the token on its first
# line). Without provision_token, ctrld-install reads CTRLD_PROVISION_TOKEN.
#
# Thin on purpose: everything is decided by ctrld-install, where it is tested.
# The exit status uses the intune profile: retryable codes exit 1618, which
# Intune retries by default; map the other codes to "Failed" (the default).
# Lines go to C:\ProgramData\ControlD\ctrld-install.log as well.

$ErrorActionPreference = 'Stop'
$dest = 'C:\ControlD'
$logDir = Join-Path $env:ProgramData 'ControlD'
New-Item -ItemType Directory -Force -Path $dest, $logDir | Out-Null
# ctrld's service runs from here as SYSTEM: only SYSTEM and Administrators may
# change it (C:\ lets every user create and modify subfolders), users may read.
& icacls.exe $dest /inheritance:r /grant:r '*S-1-5-18:(OI)(CI)F' '*S-1-5-32-544:(OI)(CI)F' '*S-1-5-32-545:(OI)(CI)RX' | Out-Null

# The service runs the ctrld.exe it was started from, and Intune deletes the
# package's folder afterwards, so both binaries move to C:\ControlD. A
# running ctrld.exe cannot be replaced; it stays for ctrld-install to verify.
foreach ($name in 'ctrld.exe', 'ctrld-install.exe') {
    Copy-Item -LiteralPath (Join-Path $PSScriptRoot $name) -Destination $dest -Force -ErrorAction SilentlyContinue
}
$bin = Join-Path $dest 'ctrld-install.exe'
if (-not (Test-Path -LiteralPath $bin)) {
    [Console]::Error.WriteLine('ctrld-install-intune: error: ctrld-install.exe is missing from the package')
    exit 60
}
$argv = @('--exit-profile', 'intune', '--log', (Join-Path $logDir 'ctrld-install.log'))
$token = Join-Path $PSScriptRoot 'provision_token'
if (Test-Path -LiteralPath $token) {
    $argv += @('--token-file', $token)
}
& $bin @argv
exit $LASTEXITCODE
