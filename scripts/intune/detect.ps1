# Intune Win32 app custom detection script: detected (exit 0 and one line on
# stdout) only when ctrld is provisioned and running, as `ctrld-install
# verify` finds it; otherwise no stdout and a non-zero exit. verify starts
# and changes nothing.

$bin = 'C:\ControlD\ctrld-install.exe'
if (-not (Test-Path -LiteralPath $bin)) {
    exit 1
}
$out = & $bin verify 2>$null
$status = $LASTEXITCODE
if ($status -eq 0) {
    Write-Output $out
    exit 0
}
exit $status
