# Intune Win32 app custom detection script: detected (exit 0 and one line on
# stdout) only when ctrld is provisioned, running and at least $MinVersion,
# as `ctrld-install verify --min-version` finds it; otherwise no stdout and
# exit 1, so Intune runs the install command. verify starts and changes
# nothing.
#
# Set $MinVersion to the ctrld version the .intunewin carries (for example
# 1.5.0, as `ctrld.exe --version` prints it): a device whose ctrld is older
# is then "not detected" and gets the new package, even though its old
# ctrld still runs; install.ps1 replaces the binary and ctrld-install
# applies it. Left empty, any version is detected. A device never
# provisioned is simply not detected: a state, not a failure.

$MinVersion = ''

$bin = 'C:\ControlD\ctrld-install.exe'
if (-not (Test-Path -LiteralPath $bin -PathType Leaf)) {
    exit 1
}
$argv = @('verify')
if ($MinVersion) { $argv += @('--min-version', $MinVersion) }
$out = & $bin @argv 2>$null
if ($LASTEXITCODE -eq 0) {
    Write-Output ($out | Select-Object -Last 1)
    exit 0
}
exit 1
