# Intune Remediations detection script (Windows). Exit 0, "compliant": ctrld
# is provisioned, running, and runs the binary on disk (at least $MinVersion
# when set), as `ctrld-install verify` finds it; a device where ctrld was
# never provisioned is compliant too, since provisioning is the Win32 app's
# job (it has the token) and remediation never provisions. Exit 1 otherwise:
# a stopped service or a new ctrld.exe its service does not run yet, which
# remediation-remediate.ps1 repairs or applies without the token. The last
# line of ctrld-install's output is what Intune shows as the detection
# output. verify starts and changes nothing.

$MinVersion = ''

$bin = 'C:\ControlD\ctrld-install.exe'
if (-not (Test-Path -LiteralPath $bin -PathType Leaf)) {
    Write-Output 'ctrld-install.exe is not installed'
    exit 0
}
$argv = @('verify')
if ($MinVersion) { $argv += @('--min-version', $MinVersion) }
$out = & $bin @argv 2>$null
$code = $LASTEXITCODE
Write-Output ($out | Select-Object -Last 1)
# 54: no service at all, "not installed", a state for the Win32 app.
if ($code -eq 0 -or $code -eq 54) {
    exit 0
}
exit 1
