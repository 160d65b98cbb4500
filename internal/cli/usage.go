package cli

import (
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// usage is printed by -h and --help on every command. README.md repeats its
// synopsis and flags; a test fails when the two differ.
func usage() string {
	var synopsis strings.Builder
	for _, c := range commandTable() {
		synopsis.WriteString("  ctrld-install " + c.synopsis + "\n")
	}
	return strings.NewReplacer("{{synopsis}}", synopsis.String(), "{{ranges}}", codes.ExitRanges(), "{{verb}}", codes.VerbProvisioning).Replace(usageText)
}

const usageText = `ctrld-install provisions Control D's DNS agent ctrld and reports one stable
failure code on every surface.

Usage:
{{synopsis}}
Install flags:
  --token VALUE          provisioning token, passed to ctrld as start --cd-org VALUE
  --token-file PATH      read the token from the first line of PATH
  --token-stdin          read the token from the first line of standard input
  --resolver ID          provision by resolver ID instead (start --cd ID)
  --resolver-file PATH   read the resolver ID from the first line of PATH
  --resolver-stdin       read the resolver ID from the first line of standard input
                         Without a token or resolver flag, the environment
                         variable CTRLD_PROVISION_TOKEN is used.
  --ctrld PATH           the ctrld binary (default: ctrld beside ctrld-install,
                         else /usr/local/bin/ctrld; C:\ControlD\ctrld.exe on Windows)
  --home DIR             ctrld's home directory (default /etc/controld; C:\ControlD)
  --result-file PATH     ctrld's failure result file (default <home>/provision_result.json)
  --service-log PATH     the daemon's own log, read for what this run appended
                         (repeatable; default the platform's, none on Windows)
  --service-file PATH    service definition that must exist after success (default
                         /Library/LaunchDaemons/ctrld.plist on macOS,
                         /etc/systemd/system/ctrld.service on Linux; Windows asks
                         the service control manager)
  --timeout DURATION     budget for the whole run, all attempts included (default 5m)
  --retries N            extra attempts for retryable codes (default 2)
  --log PATH             also append every line, timestamped, to PATH
  --json                 print one JSON summary object instead of the text lines
  --exit-profile NAME    exit status for a consumer: default, intune, filewave, jamf
  --min-version V        refuse a ctrld older than V
  --force                provision even when ctrld is already provisioned and running
  --dry-run              observe the device and print the plan; change nothing
  --simulate CODE        run the whole pipeline against a built-in stand-in for
                         ctrld that fails with CODE (OK for success), in a
                         temporary home; needs no root and changes nothing
  -h, --help             print this help

verify runs install's checks now and changes nothing; its flags mean what
they mean for install, except that --timeout defaults to 1m. A device with no
service definition is reported "not installed" (exit 54). With --min-version
it judges the running daemon, not the binary on disk.

uninstall runs ctrld uninstall and checks that the service is gone:
  --pin-file PATH        read the deactivation PIN from the first line of PATH
  --pin-stdin            read the deactivation PIN from standard input
  --cleanup              passed to ctrld uninstall: also remove its files
Its other flags mean what they mean for install; --timeout defaults to 2m.

Support commands (need no root):
  codes                  every code: stage, exit status, class, scenario, next
                         step, evidence to ask for, since, deprecation
  explain                scenario, next step and evidence for a code name (any
                         case), an exit status such as 41, or a whole failure
                         line or <result>CODE</result> pasted from a log
  summarize              count and share of each code and state, with its next
                         step, in outcome records, install.log, Jamf or Intune
                         logs or any text; each folder directly under a DIR
                         is one device, each FILE one device, standard input
                         (read when no FILE is given) one device; --latest
                         counts only the newest outcome of each device,
                         --devices lists every device, --format html is a
                         page with charts; --csv-column NAME reads CSV
                         inventory exports, one device a row, the value in
                         column NAME, named by --csv-device-column NAME or
                         a column such as "Computer Name" or "Device name"

Exit status: 0 on success, otherwise the code's exit number ({{ranges}},
126 deactivation PIN), changed only by --exit-profile. Every failure ends
with a line of the form
  ctrld-install: {{verb}} failed: stage=<stage> code=<CODE> (exit <N>)
`
