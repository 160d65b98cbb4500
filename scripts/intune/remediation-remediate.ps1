# Intune Remediations remediation script (Windows), run when
# remediation-detect.ps1 exits 1: `ctrld-install install` with no token.
# ctrld-install observes the service and brings a registered service that
# does not run back with ctrld restart ("repair applied, ctrld restarted"), or
# applies a ctrld.exe its running service was not started from ("upgrade
# applied"). Without a token it never provisions: a device that needs one
# ends INSTALLER_USAGE (61), which the Win32 app's next install fixes. The
# exit status is ctrld-install's code (0 when done); the last line of its
# output, the identifier line, is what Intune shows as the remediation
# output. The log is appended to C:\ControlD\ctrld-install.log.

$bin = 'C:\ControlD\ctrld-install.exe'
if (-not (Test-Path -LiteralPath $bin -PathType Leaf)) {
    Write-Output 'ctrld-install.exe is not installed'
    exit 63
}
$out = & $bin install --log 'C:\ControlD\ctrld-install.log' 2>&1
$code = $LASTEXITCODE
Write-Output ($out | Select-Object -Last 1)
exit $code
