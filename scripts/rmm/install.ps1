# Generic RMM script for Windows (Datto RMM component, NinjaOne, N-able, ...;
# run as SYSTEM): provisions ctrld with C:\ControlD\ctrld-install.exe, which
# the ctrld package or an earlier step put there.
#
# Script or component variables, which arrive as environment variables:
#   CTRLD_PROVISION_TOKEN  provisioning token (required); ctrld-install reads
#                          it from the environment, so it is on no command line
#   CTRLD_START_FLAGS      extra flags for ctrld start, separated by spaces
# Exit status: ctrld-install's, default profile. Lines also go to
# C:\ProgramData\ControlD\ctrld-install.log.

$bin = 'C:\ControlD\ctrld-install.exe'
if (-not (Test-Path -LiteralPath $bin)) {
    [Console]::Error.WriteLine("ctrld-install-rmm: error: ctrld-install is not installed at $bin")
    exit 60
}
$logDir = Join-Path $env:ProgramData 'ControlD'
New-Item -ItemType Directory -Force -Path $logDir | Out-Null
$argv = @('--log', (Join-Path $logDir 'ctrld-install.log'))
if ($env:CTRLD_START_FLAGS) {
    $argv += '--'
    $argv += $env:CTRLD_START_FLAGS -split '\s+' | Where-Object { $_ }
}
& $bin @argv
exit $LASTEXITCODE
