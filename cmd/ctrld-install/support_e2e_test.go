//go:build unix

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/cli"
	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/fleetreport"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// assertUsageFailure checks the ending a usage error of a command that
// only reports has: one error sentence on stderr, INSTALLER_USAGE's exit
// status, nothing on stdout (no failure line a fleet report would count as
// a device's outcome), and none of the canaries anywhere.
func assertUsageFailure(t *testing.T, r result, message string) {
	t.Helper()
	usage := codes.Must(codes.InstallerUsage)
	assert.Equal(t, usage.Exit, r.exit)
	assert.True(t, strings.HasPrefix(r.stderr, "ctrld-install: error: "+message), r.stderr)
	assert.Regexp(t, `^ctrld-install: error: [a-z-].*[^.]\n$`, r.stderr, "one lowercase sentence without a period")
	assert.Empty(t, r.stdout)
	assertNoCanaryIn(t, r)
}

func assertNoCanaryIn(t *testing.T, r result) {
	t.Helper()
	for _, canary := range []string{canaryToken, canaryResolver, canaryToken[:12], strings.ToUpper(canaryToken[:12]), strings.ToLower(canaryToken[:12])} {
		assert.NotContains(t, r.stdout, canary, "stdout leaks input")
		assert.NotContains(t, r.stderr, canary, "stderr leaks input")
	}
}

// codes, explain and summarize whose stdout cannot be written (a full
// disk) say so on stderr and exit with INSTALLER_FAILED's status.
func TestSupportCommandsWithUnwritableStdout(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full")
	}
	for _, args := range [][]string{{"codes"}, {"explain", "41"}, {"summarize", "-"}} {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		require.NoError(t, err)
		cmd := exec.Command(installerBin, args...)
		cmd.Env = cleanEnv()
		cmd.Stdin = strings.NewReader("ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n")
		cmd.Stdout = full
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err = cmd.Run()
		full.Close()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", args)
		assert.Equal(t, codes.Must(codes.InstallerFailed).Exit, ee.ExitCode(), "%v", args)
		assert.Equal(t, "ctrld-install: error: the output cannot be written\n", errb.String(), "%v", args)
	}
}

func TestCodesCommand(t *testing.T) {
	t.Parallel()
	r := runInProcess(t, "", "codes")
	assert.Equal(t, 0, r.exit)
	assert.Empty(t, r.stderr)
	for _, c := range codes.All() {
		assert.True(t, strings.Contains("\n"+r.stdout, "\n"+c.Name+"\n  stage:"), c.Name)
		assert.True(t, strings.Contains(r.stdout, "  next step:  "+c.NextStep+"\n"), c.Name)
	}
	assert.True(t, strings.HasPrefix(r.stdout, "OK\n"))

	r = runInProcess(t, "", "codes", "--format", "json")
	assert.Equal(t, 0, r.exit)
	var j struct {
		Codes []struct {
			Code       string `json:"code"`
			ExitCode   int    `json:"exit_code"`
			Evidence   string `json:"evidence"`
			Since      string `json:"since"`
			Deprecated *bool  `json:"deprecated"`
		} `json:"codes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &j))
	require.Len(t, j.Codes, len(codes.All()))
	for i, c := range codes.All() {
		assert.Equal(t, c.Name, j.Codes[i].Code)
		assert.Equal(t, c.Exit, j.Codes[i].ExitCode)
		assert.Equal(t, c.Evidence, j.Codes[i].Evidence)
		assert.Equal(t, c.Since, j.Codes[i].Since)
		assert.NotNil(t, j.Codes[i].Deprecated)
	}

	// The committed Support mapping is this output, byte for byte.
	doc, err := os.ReadFile("../../docs/provisioning-failure-codes.md")
	require.NoError(t, err)
	r = runInProcess(t, "", "codes", "--format=markdown")
	assert.Equal(t, 0, r.exit)
	assert.Equal(t, string(doc), r.stdout)

	assertUsageFailure(t, runInProcess(t, "", "codes", "--format", canaryToken), "--format must be text, json or markdown")
	assertUsageFailure(t, runInProcess(t, "", "codes", canaryToken), "codes takes no arguments")
	assertUsageFailure(t, runInProcess(t, "", "codes", "--"+canaryToken), "an unknown flag was given")
}

func TestExplainCommand(t *testing.T) {
	t.Parallel()
	bind := codes.Must(codes.ListenerBindFailed)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"code", []string{"LISTENER_BIND_FAILED"}, []string{codes.ListenerBindFailed}},
		{"lower case", []string{"listener_bind_failed"}, []string{codes.ListenerBindFailed}},
		{"unquoted words", []string{"listener", "bind", "failed"}, []string{codes.ListenerBindFailed}},
		{"exit number", []string{"41"}, []string{codes.ListenerBindFailed}},
		{"exit 126", []string{"126"}, []string{codes.DeactivationPinRequired}},
		{"the API's certificate", []string{"api_tls_failed"}, []string{codes.APITLSFailed}},
		{"an answer that is not the API's, by exit", []string{"exit", "36"}, []string{codes.APIResponseInvalid}},
		{"pasted install.log line", []string{"Nov 29 10:14:05 mac-17 installd[812]: ./postinstall: " + report.Prefix + codes.FailureLine(codes.VerbProvisioning, bind)}, []string{codes.ListenerBindFailed}},
		{"pasted line with a token after it", []string{codes.FailureLine(codes.VerbProvisioning, bind) + " --cd-org " + canaryToken}, []string{codes.ListenerBindFailed}},
		{"jamf extension attribute", []string{"<result>LISTENER_BIND_FAILED</result>"}, []string{codes.ListenerBindFailed}},
		{"several lines", []string{"attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31)\nprovisioning failed: stage=installer code=CTRLD_TIMEOUT (exit 64)"}, []string{codes.APIUnreachable, codes.CtrldTimeout}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runInProcess(t, "", append([]string{"explain"}, tc.args...)...)
			assert.Equal(t, 0, r.exit, r.stderr)
			assert.Empty(t, r.stderr)
			for _, name := range tc.want {
				c := codes.Must(name)
				assert.Contains(t, r.stdout, c.Name+"\n")
				for _, s := range []string{c.Scenario, c.NextStep, c.Evidence} {
					assert.Contains(t, r.stdout, s)
				}
			}
			assert.NotRegexp(t, failureLineRE, r.stdout, "explain prints no failure line for log scanners to count")
			assertNoCanaryIn(t, r)
		})
	}

	r := runInProcess(t, "", "explain", "1618")
	assert.Equal(t, 0, r.exit)
	assert.Contains(t, r.stdout, "--exit-profile intune: API_UNREACHABLE (exit 31), CTRLD_TIMEOUT (exit 64), INSTALLER_BUSY (exit 66), API_RESPONSE_INVALID (exit 36)\n")
}

// What admins paste from MDM consoles: the exit status with the words the
// tool prints before it, or in hexadecimal from Windows.
func TestExplainPastedExitStatus(t *testing.T) {
	t.Parallel()
	bind := codes.Must(codes.ListenerBindFailed)
	for _, args := range [][]string{
		{"Script exit code: 41"},
		{"return code was 41."},
		{"0x29"},
		{"exit", "code", "41"},
		{"exit status 41"},
		{"Executing Policy ctrld\nScript exit code: 41\nScript result: --token " + canaryToken + "\nError running script: return code was 41."},
	} {
		r := runInProcess(t, "", append([]string{"explain"}, args...)...)
		assert.Equal(t, 0, r.exit, r.stderr)
		assert.Empty(t, r.stderr)
		assert.True(t, strings.HasPrefix(r.stdout, bind.Name+"\n"), r.stdout)
		assert.Contains(t, r.stdout, bind.NextStep)
		assert.NotContains(t, r.stdout, "Script", "the input is not echoed")
		assert.NotRegexp(t, failureLineRE, r.stdout)
		assertNoCanaryIn(t, r)
	}

	r := runInProcess(t, "", "explain", "0x00000652")
	assert.Equal(t, 0, r.exit)
	assert.Contains(t, r.stdout, "exit 1618 is what an exit profile reports")
	assert.Contains(t, r.stdout, "ERROR_INSTALL_ALREADY_RUNNING", "msiexec's meaning too")
	assert.NotContains(t, r.stdout, "0x00000652", "the input is not echoed")

	assertUsageFailure(t, runInProcess(t, "", "explain", "Script exit code: 41 "+canaryToken), "the input is not a registered code")
	assertUsageFailure(t, runInProcess(t, "", "explain", "0x"+canaryToken[:12]), "the input is not a registered code")
}

// 126 is both ctrld's deactivation PIN and a shell that cannot execute the
// binary; the answer says how to tell them apart.
func TestExplain126(t *testing.T) {
	t.Parallel()
	pin, ok := codes.ByExit(126)
	require.True(t, ok)
	r := runInProcess(t, "", "explain", "126")
	assert.Equal(t, 0, r.exit, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, pin.Name+"\n"), r.stdout)
	for _, want := range []string{
		"a shell reports 126 when it found the program but could not execute it",
		"another architecture", "execute bit", "noexec",
		`lines starting with "ctrld-install:"`,
		"code=" + pin.Name + " only when",
		"file /usr/local/bin/ctrld-install",
		"--exit-profile jamf reports " + pin.Name + " as exit 0",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.NotRegexp(t, failureLineRE, r.stdout)

	// The code's name is not ambiguous, so it gets no such note.
	r = runInProcess(t, "", "explain", pin.Name)
	assert.Equal(t, 0, r.exit)
	assert.NotContains(t, r.stdout, "shell")
}

func TestExplainUnknown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		args    []string
		message string
	}{
		{"a pasted token", []string{canaryToken}, "the input is not a registered code, exit status or failure line; ctrld-install codes lists every code"},
		{"a token in result tags", []string{"<result>" + canaryToken + "</result>"}, "the input is not a registered code"},
		{"a typo", []string{"LISTNER_BIND_FAILD"}, "the input is not a registered code, exit status or failure line; nearest known codes: LISTENER_BIND_FAILED (exit 41), "},
		{"a typo next to a token", []string{"code=LISTNER_BIND_FAILD", canaryToken}, "the input is not a registered code, exit status or failure line; nearest known codes: LISTENER_BIND_FAILED (exit 41), "},
		{"an unused exit", []string{"43"}, "the input is not a registered code, exit status or failure line; nearest known codes: LISTENER_CONFIGURED_ADDR_UNAVAILABLE (exit 42), "},
		{"a line that disagrees", []string{"provisioning failed: stage=bootstrap code=LISTENER_BIND_FAILED (exit 41) " + canaryToken}, "the failure line does not agree with the registry"},
		{"nothing", nil, "explain needs a code, an exit status or a failure line"},
		// explain's arguments are data: what looks like a flag is read as
		// input, and not repeated.
		{"a token as a flag", []string{"--" + canaryToken}, "the input is not a registered code, exit status or failure line; ctrld-install codes lists every code"},
		{"a token as a shorthand", []string{"-" + canaryToken}, "the input is not a registered code, exit status or failure line; ctrld-install codes lists every code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runInProcess(t, "", append([]string{"explain"}, tc.args...)...)
			assertUsageFailure(t, r, tc.message)
		})
	}
}

// status prints these words in place of a code; explain must know every
// one of them, spelled as status spells it.
func TestExplainStatusWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	st := w.run("status", "--home", w.home, "--format", "jamf-ea")
	require.Equal(t, "<result>NEVER_RUN</result>\n", st.stdout)
	r := runInProcess(t, "", "explain", strings.TrimSpace(st.stdout))
	assert.Equal(t, 0, r.exit)
	assert.Contains(t, r.stdout, states.All[0].Meaning)
	assert.Contains(t, r.stdout, states.All[0].NextStep)
}

// fleet builds a directory the way an admin collects one: logs and records
// from real runs, exported logs full of noise, and traps.
func fleet(t *testing.T) (dir string, want map[string]int) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "fleet")
	put := func(rel, content string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	want = map[string]int{}

	// --log files and captured stdout of real runs.
	for i, name := range []string{codes.ListenerBindFailed, codes.ListenerBindFailed, codes.APIUnreachable, codes.OK, codes.ServiceSelfcheckFailed} {
		log := filepath.Join(dir, fmt.Sprintf("mac-%d", i), "ctrld-install.log")
		require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o755))
		r := runInstaller(t, nil, "", "--simulate", name, "--retries", "0", "--log", log)
		require.Equal(t, codes.Must(name).Exit, r.exit, r.stdout+r.stderr)
		put(fmt.Sprintf("mac-%d/postinstall-stdout.txt", i), r.stdout)
		want[name] += 2
	}
	// --json output of a run, saved by an inventory script.
	r := runInstaller(t, nil, "", "--simulate", codes.CtrldTimeout, "--retries", "0", "--json")
	put("json/mac-9.json", r.stdout)
	want[codes.CtrldTimeout]++

	// The outcome record a real run left in its home directory, copied.
	w := newWorld(t)
	w.script(standin.Script{Start: standin.Action{Stdout: []string{"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)", canaryToken}, Exit: 41}})
	w.run("--token", canaryToken)
	b, err := os.ReadFile(filepath.Join(w.home, "ctrld-install-result.json"))
	require.NoError(t, err)
	put("records/mac-10/ctrld-install-result.json", string(b))
	want[codes.ListenerBindFailed]++

	// Jamf extension attribute values, and a rotated, compressed install.log.
	put("jamf/ea.txt", "<result>OK</result>\n<result>NEVER_RUN</result>\n<result>"+strings.ToUpper(canaryToken)+"</result>\n")
	want[codes.OK]++
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprintf(zw, "Nov 29 10:14:05 mac-11 installd[812]: ./postinstall: %s%s\n", report.Prefix, codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.CtrldNotFound)))
	zw.Close()
	put("mac-11/install.log.0.gz", gz.String())
	want[codes.CtrldNotFound]++

	// Noise with the token in every shape a parser might copy from.
	upper := strings.ToUpper(canaryToken)
	put("intune/IntuneManagementExtension.log", strings.Join([]string{
		`<![LOG[[Win32App] launching ctrld-install --token ` + canaryToken + `]LOG]!><time="10:14:03.1234567" date="11-29-2026">`,
		`<![LOG[[Win32App] stdout: provisioning failed: stage=listener code=` + upper + ` (exit 41)]LOG]!>`,
		`<![LOG[[Win32App] stdout: provisioning failed: stage=` + strings.ToLower(canaryToken) + ` code=LISTENER_BIND_FAILED (exit 41)]LOG]!>`,
		`{"version":1,"result":"failed","stage":"listener","code":"` + upper + `","exit_code":41}`,
		`{"msg":"` + canaryToken + `"}`,
		"{ " + canaryToken,
		strings.Repeat(canaryToken, 3000),
		`<![LOG[[Win32App] stdout: ` + report.Prefix + codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.InstallerBusy)) + ` ` + canaryToken + `]LOG]!>`,
		// uninstall's lines are outcomes; verify's describe and are not.
		`<![LOG[[Win32App] stdout: ctrld-install: uninstall failed: stage=service code=` + upper + ` (exit 56)]LOG]!>`,
		`<![LOG[[Win32App] stdout: ctrld-install: uninstall failed: stage=service code=DEACTIVATION_PIN_REQUIRED (exit 126) --pin ` + canaryToken + `]LOG]!>`,
		`<![LOG[[Win32App] stdout: ctrld-install: verify failed: stage=service code=SERVICE_NOT_RUNNING (exit 55) ` + canaryToken + `]LOG]!>`,
		`<![LOG[[Win32App] stdout: ctrld-install: not installed: ` + canaryToken + `]LOG]!>`,
	}, "\n")+"\n")
	want[codes.InstallerBusy]++
	want[codes.DeactivationPinRequired]++

	// Links out of the tree and a FIFO: not followed, not read, no hang.
	outside := filepath.Join(filepath.Dir(dir), "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "log"), []byte(strings.Repeat(codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.InstallerFailed))+"\n", 7)), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link-out")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "log"), filepath.Join(dir, "link-log")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	return dir, want
}

func TestSummarizeCommand(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	dir, want := fleet(t)
	total := 1 // the extension attribute's NEVER_RUN, a state
	for _, n := range want {
		total += n
	}

	r := runInProcess(t, "", "summarize", "--format", "json", dir)
	require.Equal(t, 0, r.exit, r.stderr)
	assert.Empty(t, r.stderr)
	var j struct {
		Outcomes int `json:"outcomes"`
		Codes    []struct {
			Code  string  `json:"code"`
			Count int     `json:"count"`
			Share float64 `json:"share"`
		} `json:"codes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &j))
	got := map[string]int{}
	for _, c := range j.Codes {
		got[c.Code] = c.Count
	}
	assert.Equal(t, want, got)
	assert.Equal(t, total, j.Outcomes)
	for i := 1; i < len(j.Codes); i++ {
		a, b := j.Codes[i-1], j.Codes[i]
		assert.True(t, a.Count > b.Count || a.Count == b.Count && a.Code < b.Code, "sorted by count, then code")
	}
	assertNoCanaryIn(t, r)

	for _, format := range []string{"text", "csv", "markdown"} {
		r := runInProcess(t, "", "summarize", "--format="+format, dir)
		assert.Equal(t, 0, r.exit, format)
		assert.Empty(t, r.stderr)
		assertNoCanaryIn(t, r)
		for name := range want {
			assert.Contains(t, r.stdout, name, format)
			assert.Contains(t, r.stdout, codes.Must(name).NextStep, format)
		}
		assert.NotRegexp(t, failureLineRE, r.stdout, "a summary is not itself a failure")
	}
	r = runInProcess(t, "", "summarize", "--format", "csv", dir)
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"code", "stage", "exit_code", "class", "count", "share", "next_step"}, rows[0])
	assert.Len(t, rows, len(want)+1+1+len(fleetreport.Buckets), "the headline's buckets, a row per code and the state NEVER_RUN")
	assert.Equal(t, []string{"NEVER_RUN", "", "", "state", "1"}, rows[len(rows)-1][:5])

	// A link named on the command line is followed; the files named in
	// several arguments are each read.
	r = runInProcess(t, "", "summarize", "--format", "json", filepath.Join(dir, "link-out"), filepath.Join(dir, "link-log"))
	assert.Contains(t, r.stdout, `"outcomes": 14`)
}

func TestSummarizeStdin(t *testing.T) {
	t.Parallel()
	bind := codes.Must(codes.ListenerBindFailed)
	input := "noise " + canaryToken + "\n" + report.Prefix + codes.FailureLine(codes.VerbProvisioning, bind) + "\n<result>OK</result>\n"
	for _, args := range [][]string{{"summarize"}, {"summarize", "-"}, {"summarize", "--format", "text", "--", "-"}} {
		r := runInstaller(t, nil, input, args...)
		assert.Equal(t, 0, r.exit)
		assert.Equal(t, "2 outcomes from 1 input\n"+
			"healthy 1, needs attention 0, not deployed 0, settled 0, running 0 (1 device, by the newest outcome of each)\n"+
			"\ncount   share  code or state\n"+
			"    1   50.0%  LISTENER_BIND_FAILED (stage listener, exit 41, fatal)\n"+
			"               next step: "+bind.NextStep+"\n"+
			"    1   50.0%  OK (exit 0, ok)\n"+
			"               next step: Nothing to do.\n", r.stdout)
		assertNoCanaryIn(t, r)
	}
}

func TestSummarizeUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, canaryToken)
	assertUsageFailure(t, runInProcess(t, "", "summarize", dir, missing), "input 2 of 2 cannot be found")
	assertUsageFailure(t, runInProcess(t, "", "summarize", "--format", canaryToken, dir), "--format must be text, json, csv, markdown or html")
	assertUsageFailure(t, runInProcess(t, "", "summarize", "--"+canaryToken+"=1"), "an unknown flag was given")
}

// simulatedLog is the --log file of one real run that ends in name. A
// device's log is its runs' logs one after another, since --log appends.
func simulatedLog(t *testing.T, name string) string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "ctrld-install.log")
	r := runInstaller(t, nil, "", "--simulate", name, "--retries", "0", "--log", log)
	require.Equal(t, codes.Must(name).Exit, r.exit, r.stdout+r.stderr)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	return string(b)
}

// Ten devices that ended in success (some after failing first) and one
// whose MDM re-ran the install every 15 minutes for a day, each run
// rejected: with --latest that is eleven devices and one failure.
func TestSummarizeLatestCommand(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	// In the order a device ran them: the rejected runs, then the success.
	rejected := simulatedLog(t, codes.APIRejected)
	ok := simulatedLog(t, codes.OK)
	noise := "Nov 29 10:14:03 mac installd[812]: ./postinstall: --token " + canaryToken + "\n"
	dir := filepath.Join(t.TempDir(), "fleet")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i := range 10 {
		log := noise + strings.Repeat(rejected, i%3) + ok
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("mac-%02d.log", i)), []byte(log), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mac-10.log"), []byte(noise+strings.Repeat(rejected, 96)), 0o644))

	type summary struct {
		Outcomes int  `json:"outcomes"`
		Inputs   int  `json:"inputs"`
		Latest   bool `json:"latest"`
		Codes    []struct {
			Code  string `json:"code"`
			Class string `json:"class"`
			Count int    `json:"count"`
		} `json:"codes"`
	}
	read := func(r result) (s summary, failures int) {
		t.Helper()
		require.Equal(t, 0, r.exit, r.stderr)
		assert.Empty(t, r.stderr)
		assertNoCanaryIn(t, r)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &s))
		for _, c := range s.Codes {
			if c.Class != string(codes.ClassOK) {
				failures += c.Count
			}
		}
		return s, failures
	}

	s, failures := read(runInProcess(t, "", "summarize", "--latest", "--format", "json", dir))
	assert.Equal(t, 11, s.Outcomes)
	assert.Equal(t, 1, failures)
	assert.Equal(t, 11, s.Inputs)
	assert.True(t, s.Latest)

	// Without --latest, each of the 96 re-runs is counted.
	s, failures = read(runInProcess(t, "", "summarize", "--format", "json", dir))
	assert.Equal(t, 96+(0+1+2+0+1+2+0+1+2+0), failures)
	assert.False(t, s.Latest)

	// Files named one by one are each one input.
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	require.NoError(t, err)
	s, failures = read(runInProcess(t, "", append([]string{"summarize", "--latest", "--format", "json"}, files...)...))
	assert.Equal(t, 11, s.Outcomes)
	assert.Equal(t, 1, failures)

	// Standard input is one input, whatever it holds.
	s, failures = read(runInstaller(t, nil, strings.Repeat(rejected, 96)+ok, "summarize", "--latest", "--format", "json"))
	assert.Equal(t, 1, s.Outcomes)
	assert.Zero(t, failures)

	r := runInProcess(t, "", "summarize", "--latest", dir)
	assert.True(t, strings.HasPrefix(r.stdout, "11 devices from 11 inputs, the last outcome of each\n"), r.stdout)
	assertNoCanaryIn(t, r)
}

// A file that breaks off (here a truncated rotated log) is reported by
// number; what was counted before the break stays counted.
func TestSummarizeUnreadableFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprintln(zw, codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.CtrldTimeout)))
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(zw, "noise %d %s\n", i, canaryToken)
	}
	zw.Close()
	require.NoError(t, os.WriteFile(filepath.Join(dir, canaryToken+".log.gz"), gz.Bytes()[:gz.Len()/2], 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ok.log"), []byte(codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.CtrldTimeout))+"\n"), 0o644))
	r := runInProcess(t, "", "summarize", dir)
	assert.Equal(t, 0, r.exit)
	assert.Equal(t, "ctrld-install: warning: 1 file(s) could not be read to the end; the summary leaves out what they hold\n", r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "2 outcomes from 2 inputs\n"), r.stdout)
	assert.Contains(t, r.stdout, "\n1 file could not be read to the end.\n")
	assertNoCanaryIn(t, r)
}

// 100,000 records through the built binary: every count right, in a few
// seconds, in memory that does not depend on the input.
func TestSummarize100kRecords(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("writes 100,000 records")
	}
	path := filepath.Join(t.TempDir(), "fleet.log")
	f, err := os.Create(path)
	require.NoError(t, err)
	var b bytes.Buffer
	all := codes.All()
	want := map[string]int{}
	for i := 0; i < 100_000; i++ {
		c := all[i%len(all)]
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "Nov 29 10:14:05 mac-%d installd[812]: ./postinstall: ctrld-install: attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31); retrying in 10s\n", i)
			fallthrough
		case 1:
			if c.IsOK() {
				fmt.Fprintf(&b, "2026-11-29T10:14:05Z %s%s\n", report.Prefix, outcome.LineProvisioned)
			} else {
				fmt.Fprintf(&b, "2026-11-29T10:14:05Z %s%s\n", report.Prefix, codes.FailureLine(codes.VerbProvisioning, c))
			}
		case 2:
			result := "failed"
			if c.IsOK() {
				result = "ok"
			}
			fmt.Fprintf(&b, "{\n  \"version\": 1,\n  \"timestamp\": \"2026-11-29T10:14:05Z\",\n  \"result\": %q,\n  \"stage\": %q,\n  \"code\": %q,\n  \"exit_code\": %d,\n  \"message\": %q\n}\n",
				result, c.Stage, c.Name, c.Exit, canaryToken)
		case 3:
			fmt.Fprintf(&b, "<result>%s</result>\nnoise %s\n", c.Name, canaryToken)
		}
		want[c.Name]++
		if b.Len() > 1<<20 {
			_, err := f.Write(b.Bytes())
			require.NoError(t, err)
			b.Reset()
		}
	}
	_, err = f.Write(b.Bytes())
	require.NoError(t, err)
	require.NoError(t, f.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)

	cmd := exec.Command(installerBin, "summarize", "--format", "json", path)
	var out bytes.Buffer
	cmd.Stdout = &out
	t0 := time.Now()
	require.NoError(t, cmd.Run())
	elapsed := time.Since(t0)
	var j struct {
		Outcomes int `json:"outcomes"`
		Codes    []struct {
			Code  string `json:"code"`
			Count int    `json:"count"`
		} `json:"codes"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &j))
	got := map[string]int{}
	for _, c := range j.Codes {
		got[c.Code] = c.Count
	}
	assert.Equal(t, want, got)
	assert.Equal(t, 100_000, j.Outcomes)
	assert.NotContains(t, out.String(), canaryToken[:12])
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.Logf("100,000 records, %.1f MiB, in %v; max RSS %d (KiB on Linux, bytes on macOS)", float64(fi.Size())/(1<<20), elapsed, ru.Maxrss)
	}
	// Generous for a shared CI machine; a laptop takes well under a second.
	assert.Less(t, elapsed, 20*time.Second)
}

// The usage text and README.md describe the same commands and flags, and
// every flag they document is one the command accepts.
func TestHelpMatchesReadme(t *testing.T) {
	t.Parallel()
	h := runInstaller(t, nil, "", "-h")
	require.Equal(t, 0, h.exit)
	help := h.stdout
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)

	// The synopsis, line for line.
	synopsis := section(help, "Usage:")
	require.NotEmpty(t, synopsis)
	readmeSynopsis := codeBlockAfter(string(readme), "## Commands")
	assert.Equal(t, synopsis, readmeSynopsis, "the synopsis in README.md ## Commands differs from ctrld-install -h")

	// Install flags: the same set, and the usage's defaults in the README's
	// default column.
	helpFlags := flagDefinitions(section(help, "Install flags:"))
	readmeRows := flagTable(string(readme), "### Install flags")
	require.NotEmpty(t, helpFlags)
	assert.ElementsMatch(t, keys(helpFlags), keys(readmeRows), "README.md ### Install flags and ctrld-install -h list different flags")
	for flag, desc := range helpFlags {
		if m := regexp.MustCompile(`\(default:?\s+([^\s;,)]+)`).FindStringSubmatch(desc); m != nil {
			assert.Contains(t, readmeRows[flag], m[1], "default of %s", flag)
		}
	}

	// Every command's documented flags are exactly the ones it accepts,
	// among all the flags documented anywhere.
	documented := map[string][]string{"install": keys(helpFlags)}
	universe := map[string]bool{}
	for _, f := range keys(helpFlags) {
		universe[f] = true
	}
	for _, line := range synopsis {
		fields := strings.Fields(line)
		cmd := fields[1]
		if strings.HasPrefix(cmd, "[") {
			continue // install: its flags are the table
		}
		documented[cmd] = []string{}
		for _, m := range regexp.MustCompile(`\[(--[a-z-]+)`).FindAllStringSubmatch(line, -1) {
			documented[cmd] = append(documented[cmd], m[1])
			universe[m[1]] = true
		}
	}
	for _, cmd := range []string{"install", "verify", "status", "codes", "explain", "summarize", "version"} {
		require.Contains(t, documented, cmd, "the synopsis has no %s line", cmd)
	}
	home := t.TempDir()
	// An absolute value, so that --log and the path flags write nothing into
	// the source tree.
	probe := filepath.Join(home, "zz-probe")
	// Which flags a command accepts is a matter of its flag set alone: asked
	// in process, through the command line's one entry point, not with a
	// process for each of the commands' dozens of flags. Every call ends in
	// the usage error of --zz-not-a-flag before anything runs.
	for cmd, flags := range documented {
		if cmd == "explain" {
			// explain takes every argument as data (a negative Intune
			// status, a pasted line): no flag is refused, none is parsed.
			continue
		}
		for flag := range universe {
			args := []string{cmd, flag + "=" + probe, "--zz-not-a-flag"}
			if cmd == "install" {
				// A usage error as root records itself in the home directory.
				args = []string{cmd, "--home", home, flag + "=" + probe, "--zz-not-a-flag"}
			}
			var out, errb bytes.Buffer
			code := cli.Run(context.Background(), args, cli.Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, cli.Build{Version: version})
			require.Equal(t, codes.Must(codes.InstallerUsage).Exit, code, "%s %s: %s", cmd, flag, errb.String())
			// version parses no flags: it refuses every argument.
			accepted := !strings.Contains(errb.String(), "unknown flag "+flag+"\n") && !strings.Contains(errb.String(), "takes no arguments")
			assert.Equal(t, slices.Contains(flags, flag), accepted, "%s %s: documented and accepted differ", cmd, flag)
		}
		if cmd == "version" {
			continue
		}
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			r := runInstaller(t, nil, "", cmd, "--help")
			assert.Equal(t, 0, r.exit)
			assert.Equal(t, help, r.stdout)
		})
	}
}

// README.md names only codes that exist: a renamed code or a typo in the
// troubleshooting table fails here.
func TestReadmeNamesOnlyRegisteredCodes(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	// The environment variables (the token; where the real suite finds the
	// releases), and the placeholder of the grammar.
	known := map[string]bool{"CTRLD_PROVISION_TOKEN": true, "CODE": true, "CTRLD_INSTALL_REAL": true,
		// The MSI's public properties.
		"CTRLD_TOKEN": true, "CTRLD_TOKEN_FILE": true, "CTRLD_RESOLVER": true, "CTRLD_RESOLVER_FILE": true, "CTRLD_START_FLAGS": true, "CTRLD_PIN_FILE": true}
	for _, w := range states.All {
		known[w.Word] = true
	}
	for _, c := range codes.All() {
		known[c.Name] = true
	}
	re := regexp.MustCompile("`([A-Z][A-Z0-9]*_[A-Z0-9_]*|OK)`|code=([A-Z_]+)|<result>([A-Z_]+)</result>")
	n := 0
	for _, m := range re.FindAllStringSubmatch(string(readme), -1) {
		name := m[1] + m[2] + m[3]
		assert.True(t, known[name], "README.md names %s, which is not a registered code", name)
		n++
	}
	assert.Greater(t, n, len(codes.All()))
}

// section returns the trimmed lines after the line equal to title, up to
// the first blank line.
func section(text, title string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == title:
			in = true
		case in && strings.TrimSpace(line) == "":
			return out
		case in:
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// codeBlockAfter returns the trimmed lines of the first fenced block after
// the heading.
func codeBlockAfter(md, heading string) []string {
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		return nil
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	if !ok {
		return nil
	}
	block, _, _ := strings.Cut(rest, "```")
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		out = append(out, strings.TrimSpace(line))
	}
	return out
}

// flagDefinitions maps each flag defined in a usage section (a line that
// starts with it) to its description, continuation lines included. Help is
// left out: every command has it.
func flagDefinitions(lines []string) map[string]string {
	out := map[string]string{}
	last := ""
	def := regexp.MustCompile(`^(?:-[a-z], )?(--[a-z][a-z-]*)(?: [A-Z]+)?\s+(.*)$`)
	for _, line := range lines {
		if m := def.FindStringSubmatch(line); m != nil {
			last = m[1]
			out[last] = m[2]
			continue
		}
		if last != "" {
			out[last] += " " + line
		}
	}
	delete(out, "--help")
	return out
}

// flagTable maps each flag in the first column of the table under heading
// to the text of its row.
func flagTable(md, heading string) map[string]string {
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		return nil
	}
	if i := strings.Index(rest, "\n#"); i >= 0 {
		rest = rest[:i]
	}
	out := map[string]string{}
	for _, line := range strings.Split(rest, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range regexp.MustCompile("`(--[a-z][a-z-]*)").FindAllStringSubmatch(cells[1], -1) {
			out[m[1]] = line
		}
	}
	delete(out, "--help")
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A Jamf inventory export with every state word, read by docs/support.md's
// own --csv-column line: each computer is a device, each state a row of its
// own, removals are UNINSTALLED, and the shares are of all computers and
// add up to 100 %. No cell but the computer's name is printed.
func TestSummarizeJamfExport(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../docs/support.md")
	require.NoError(t, err)
	var wrap string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "ctrld-install summarize --latest --csv-column ") && strings.Contains(l, " computers.csv") {
			wrap, _, _ = strings.Cut(l, "#")
		}
	}
	require.NotEmpty(t, wrap, "docs/support.md shows how to read a Jamf export")
	dir := t.TempDir()
	values := []string{"OK", "LISTENER_BIND_FAILED", "NEVER_RUN", "NOT_INSTALLED", "RUNNING", "STATUS_FAILED", "UNINSTALLED", "INVALID_RECORD", ""}
	var csvText strings.Builder
	csvText.WriteString("\"Computer Name\",\"Serial Number\",\"ctrld-install result\"\r\n")
	for i, v := range values {
		fmt.Fprintf(&csvText, "\"mac-%d\",\"%s-%06d\",\"%s\"\r\n", i, canaryToken, i, v)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "computers.csv"), []byte(csvText.String()), 0o644))
	cmd := exec.Command("sh", "-c", strings.Replace(wrap, " summarize ", " summarize --format json ", 1))
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "PATH="+filepath.Dir(installerBin)+":"+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), errb.String())
	var j struct {
		Outcomes int `json:"outcomes"`
		Codes    []struct {
			Code  string  `json:"code"`
			Count int     `json:"count"`
			Share float64 `json:"share"`
		} `json:"codes"`
		States []struct {
			State string  `json:"state"`
			Count int     `json:"count"`
			Share float64 `json:"share"`
		} `json:"states"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &j), out.String())
	assert.Equal(t, len(values), j.Outcomes, "one outcome per computer")
	got := map[string]int{}
	sum := 0.0
	for _, c := range j.Codes {
		got[c.Code] = c.Count
		sum += c.Share
	}
	for _, s := range j.States {
		got["state "+s.State] = s.Count
		sum += s.Share
	}
	assert.Equal(t, map[string]int{"OK": 1, "LISTENER_BIND_FAILED": 1, "state NEVER_RUN": 1, "state NOT_INSTALLED": 1, "state RUNNING": 1,
		"state STATUS_FAILED": 1, "state UNINSTALLED": 1, "state INVALID_RECORD": 1, "state ": 1}, got)
	assert.InDelta(t, 1, sum, 0.0005, "shares of all computers add up to 100 %%")
	assert.NotContains(t, out.String(), canaryToken)

	// The text report says the same, states as rows after the codes.
	cmd = exec.Command("sh", "-c", wrap)
	cmd.Dir, cmd.Env = dir, append(cleanEnv(), "PATH="+filepath.Dir(installerBin)+":"+os.Getenv("PATH"))
	text, err := cmd.Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(text), "9 devices from 9 inputs, the last outcome of each\nhealthy 1, needs attention 3, not deployed 4, settled 0, running 1\n"), string(text))
	assert.NotContains(t, string(text), canaryToken)
	assert.Contains(t, string(text), "    1   11.1%  (empty) (state)\n")
	assert.Contains(t, string(text), "    1   11.1%  UNINSTALLED (state)\n")
}

// The fleet folder through the binary: one device per folder, with
// --devices a row each in every format, and the HTML page self-contained.
func TestSummarizeDevicesCommand(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	dir, _ := fleet(t)
	r := runInProcess(t, "", "summarize", "--latest", "--devices", "--format", "json", dir)
	require.Equal(t, 0, r.exit, r.stderr)
	var j struct {
		Outcomes int `json:"outcomes"`
		Devices  []struct {
			Device string `json:"device"`
			Code   string `json:"code"`
			Class  string `json:"class"`
			When   string `json:"when"`
		} `json:"devices"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &j))
	got := map[string]string{}
	for _, d := range j.Devices {
		got[d.Device] = d.Code
	}
	// Each folder directly under the directory is a device, its newest
	// outcome across its files: the --log and stdout of one run are one.
	assert.Equal(t, map[string]string{
		"mac-0": codes.ListenerBindFailed, "mac-1": codes.ListenerBindFailed, "mac-2": codes.APIUnreachable, "mac-3": codes.OK, "mac-4": codes.ServiceSelfcheckFailed,
		"json": codes.CtrldTimeout, "records": codes.ListenerBindFailed, "jamf": states.NeverRun, "mac-11": codes.CtrldNotFound, "intune": codes.DeactivationPinRequired,
	}, got)
	assert.Equal(t, len(got), j.Outcomes)
	assertNoCanaryIn(t, r)

	for format, rowRE := range map[string]string{
		"text":     `(?m)^mac-3 +OK +20[0-9-]+T[0-9:]+Z +1\.6\.0 +provisioned +- +-$`,
		"csv":      `(?m)^mac-3,OK,ok,20[0-9-]+T[0-9:]+Z,1\.6\.0,provisioned,healthy,,0$`,
		"markdown": "(?m)^\\| mac\\\\-3 \\| `OK` \\| 20[0-9-]+T[0-9:]+Z \\| 1\\.6\\.0 \\| provisioned \\| - \\| - \\|$",
		"html":     `<tr data-device="mac-3" data-code="OK" data-class="ok">`,
	} {
		r := runInProcess(t, "", "summarize", "--latest", "--devices", "--format", format, dir)
		require.Equal(t, 0, r.exit, r.stderr)
		assert.Regexp(t, rowRE, r.stdout, format)
		assertNoCanaryIn(t, r)
	}
	r = runInProcess(t, "", "summarize", "--latest", "--format", "html", dir)
	assert.Contains(t, r.stdout, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`)
	assert.NotRegexp(t, `(?i)<script|\ssrc=|\shref=|url\(`, r.stdout)
	assert.NotRegexp(t, failureLineRE, r.stdout)
}

// runInProcess runs a report command through cli.Run over buffers: codes,
// explain and summarize read nothing of the machine's defaults, so they
// need no process of their own.
func runInProcess(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	t0 := time.Now()
	code := cli.Run(context.Background(), args, cli.Stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb}, cli.Build{Version: version})
	return result{stdout: out.String(), stderr: errb.String(), exit: code, elapsed: time.Since(t0)}
}
