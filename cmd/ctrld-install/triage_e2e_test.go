//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// Triage: what real ctrld releases printed, replayed through the built
// binary, must end with the code Support expects for it.

const capturesDir = "../../internal/parse/testdata/captures"

// capture is one entry of the captures' index.json.
type capture struct {
	File               string   `json:"file"`
	VersionLine        string   `json:"version_line"`
	Mode               string   `json:"mode"`
	Extra              []string `json:"extra"`
	Unprivileged       bool     `json:"unprivileged"`
	Port53Bound        bool     `json:"port53_bound"`
	Exit               int      `json:"exit"`
	Legacy             string   `json:"legacy"`
	UnknownFlag        string   `json:"unknown_flag"`
	Code               string   `json:"code"`
	ServiceLogCode     string   `json:"service_log_code"`
	CodeWithServiceLog string   `json:"code_with_service_log"`
}

func loadCaptures(t *testing.T) []capture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(capturesDir, "index.json"))
	require.NoError(t, err)
	var idx struct {
		Captures []capture `json:"captures"`
	}
	require.NoError(t, json.Unmarshal(b, &idx))
	require.Len(t, idx.Captures, 46, "the index lists every capture")
	return idx.Captures
}

// captureParts splits a capture file into ctrld's output (everything before
// the first "### " line) and, for the daemonlog capture, the daemon's own
// log (after "### /var/log/ctrld.log:", up to the next "### " line). The
// placeholders become the canaries, as the real secrets would be there.
func captureParts(t *testing.T, name string) (output, daemonLog string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(capturesDir, name))
	require.NoError(t, err)
	text := strings.NewReplacer("<TOKEN>", canaryToken, "<RESOLVER>", canaryResolver).Replace(string(raw))
	var out, dlog strings.Builder
	section := "output"
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(l, "### ") {
			if strings.HasPrefix(l, "### /var/log/ctrld.log:") {
				section = "daemon"
			} else {
				section = "other"
			}
			continue
		}
		switch section {
		case "output":
			out.WriteString(l)
		case "daemon":
			dlog.WriteString(l)
		}
	}
	require.NotEmpty(t, out.String(), name)
	return out.String(), dlog.String()
}

// versionOf is the version the stand-in prints after "ctrld version ".
func versionOf(t *testing.T, c capture) string {
	t.Helper()
	v, ok := strings.CutPrefix(c.VersionLine, "ctrld version ")
	require.True(t, ok, c.VersionLine)
	return v
}

// before130 reports whether the release predates --cd-org.
func before130(t *testing.T, version string) bool {
	t.Helper()
	v, err := parse.ParseVersionLoose(version)
	require.NoError(t, err)
	return v.Major() == 1 && v.Minor() < 3
}

// replayedToo are captures that newestPerScenario would leave out but that
// are the evidence for their code on their release: what the API's address
// answered instead of the API, as 1.4.9 printed it next to 1.5.0, and
// 1.4.9's resolver request failing offline, whose scenario 1.5.0 shares
// only with the PIN check that got no answer (exit 126).
var replayedToo = map[string]bool{
	"ctrld-1.4.9-api500text.txt": true,
	"ctrld-1.4.9-apibadcert.txt": true,
	"ctrld-1.4.9-s2.txt":         true,
}

// newestPerScenario keeps, of the captures that show the same scenario
// (code, secret, unknown flag, privileges, port 53, daemon log, and a
// release before or after --cd-org), the newest release's, and the
// captures in replayedToo. Every capture is classified in internal/parse;
// through the binary a scenario's other captures would run the same path
// again with other words, and each run costs five process starts.
func newestPerScenario(t *testing.T, all []capture) []capture {
	t.Helper()
	type scenario struct {
		code, mode, flag             string
		unprivileged, port53, svcLog bool
		beforeCdOrg                  bool
	}
	newest := map[scenario]capture{}
	var order []scenario
	for _, c := range all {
		v := versionOf(t, c)
		k := scenario{c.Code, c.Mode, c.UnknownFlag, c.Unprivileged, c.Port53Bound, c.CodeWithServiceLog != "", before130(t, v)}
		have, ok := newest[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || parse.MustParseVersion(versionOf(t, have)).LessThan(parse.MustParseVersion(v)) {
			newest[k] = c
		}
	}
	out := make([]capture, 0, len(order))
	for _, k := range order {
		out = append(out, newest[k])
	}
	for _, c := range all {
		if replayedToo[c.File] && !slices.ContainsFunc(out, func(o capture) bool { return o.File == c.File }) {
			out = append(out, c)
		}
	}
	return out
}

// replayProfiles runs the captures of some codes under an exit profile: the
// exit status is the profile's, on macOS and Linux its low 8 bits, and
// every other surface keeps the registry's number.
var replayProfiles = map[string]struct {
	name string
	exit int
}{
	codes.APIResponseInvalid: {"intune", 1618 & 0xff},
	codes.APITLSFailed:       {"filewave", 220},
}

// replayArgs are the arguments of a run that passes the capture's secret
// and its extra flags.
func replayArgs(c capture, extra ...string) []string {
	args := []string{"--retries", "0", "--timeout", "60s"}
	if c.Mode == "token" {
		args = append(args, "--token", canaryToken)
	} else {
		args = append(args, "--resolver", canaryResolver)
	}
	args = append(args, extra...)
	if len(c.Extra) > 0 {
		args = append(append(args, "--"), c.Extra...)
	}
	return args
}

func TestCapturesReplayedThroughTheBinary(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, c := range newestPerScenario(t, loadCaptures(t)) {
		t.Run(strings.TrimSuffix(c.File, ".txt"), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			output, daemonLog := captureParts(t, c.File)
			out := filepath.Join(w.dir, "ctrld-output.txt")
			require.NoError(t, os.WriteFile(out, []byte(output), 0o600))
			version := versionOf(t, c)
			w.script(standin.Script{
				Version: version,
				Start:   standin.Action{CatFile: out, Exit: c.Exit},
				Status:  standin.Action{NeedFile: w.serviceFile},
			})
			// No daemon log unless the subtest below gives one: the test
			// binary's default logs lie under its private root.
			noLog := filepath.Join(w.dir, "no-daemon.log")
			extra := []string{"--service-log", noLog}
			p, profiled := replayProfiles[c.Code]
			if profiled {
				extra = append(extra, "--exit-profile", p.name)
			}
			r := w.run(replayArgs(c, extra...)...)
			if profiled {
				assert.Equal(t, p.exit, r.exit, "--exit-profile %s; stdout:\n%s", p.name, r.stdout)
				assert.NotEqual(t, codes.Must(c.Code).Exit, p.exit)
				r.exit = codes.Must(c.Code).Exit // what the identifier line and the record carry
			}
			w.assertFailure(r, c.Code, "")
			assert.Equal(t, "absent", w.record().ResultFile)

			starts := actions(t, w.argvFile)
			if c.Mode == "token" && before130(t, version) {
				assert.Equal(t, codes.CtrldVersionUnsupported, c.Code)
				assert.Empty(t, starts, "ctrld start must not run: this release has no --cd-org")
				assert.Equal(t, "installer", w.record().Source)
				assert.Contains(t, r.stderr, "has no --cd-org flag (it appeared in ctrld 1.3.0)")
				return
			}
			require.Len(t, starts, 1, "one attempt")
			flag, secret := "--cd-org", canaryToken
			if c.Mode == "resolver" {
				flag, secret = "--cd", canaryResolver
			}
			assert.Equal(t, append([]string{w.fake, "start", flag, secret}, c.Extra...), starts[0].Argv)
			if c.Code == codes.InstallerUsage {
				assert.Contains(t, r.stderr, "ctrld refused a flag or a value given after --")
			}

			if daemonLog == "" {
				return
			}
			// The same failure with the daemon's own log written during the run.
			t.Run("with the daemon's log", func(t *testing.T) {
				t.Parallel()
				require.NotEmpty(t, c.CodeWithServiceLog)
				w2 := newWorld(t)
				svcLog := filepath.Join(w2.dir, "ctrld.log")
				w2.script(standin.Script{
					Version: version,
					Start:   standin.Action{AppendFiles: map[string]string{svcLog: daemonLog}, CatFile: out, Exit: c.Exit},
					Status:  standin.Action{NeedFile: w2.serviceFile},
				})
				r := w2.run(replayArgs(c, "--service-log", svcLog)...)
				w2.assertFailure(r, c.CodeWithServiceLog, "service-log")
				assert.Equal(t, "used", w2.record().ServiceLog)
			})
		})
	}
}

// ctrld 1.5.0 hides the cause behind its self-check; the daemon's own log
// written during the run has it. Lines from before the run and a log that
// is a link do not count.
func TestServiceLogExplainsAFailedSelfCheck(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	const fatal = "Nov 30 14:46:03.826 FTL network is not up yet\n"
	const notice = "Nov 30 14:45:24.609 NTC internal logging enabled\n"
	const tlsFatal = `Nov 30 14:46:03.826 FTL failed to fetch resolver config error="postUtilityAPI client.Do: Post \"https://147.185.34.1/utility?platform=ctrld&version=v1.5.0\": tls: failed to verify certificate: x509: certificate signed by unknown authority" mode=cd` + "\n"
	for _, tc := range []struct {
		name    string
		file    string // the log's name
		before  string // the log's content before the run; "" for no file
		append  string // what the daemon appends during the run
		symlink bool
		code    string
		source  string
		state   string
	}{
		{"fatal written during the run", "ctrld.log", notice, notice + fatal, false, codes.APIUnreachable, "service-log", "used"},
		{"fatal in a new log", "ctrld.log", "", notice + fatal, false, codes.APIUnreachable, "service-log", "used"},
		{"the API's certificate does not verify", "ctrld.log", notice, notice + tlsFatal, false, codes.APITLSFailed, "service-log", "used"},
		{"a comma in the log's path", "ctrld,out.log", notice, notice + fatal, false, codes.APIUnreachable, "service-log", "used"},
		{"only older lines", "ctrld.log", notice + fatal, "", false, codes.ServiceSelfcheckFailed, "legacy-output", "read"},
		{"older fatal and a new notice", "ctrld.log", notice + fatal, notice, false, codes.ServiceSelfcheckFailed, "legacy-output", "read"},
		{"the log is a symlink", "ctrld.log", notice, notice + fatal, true, codes.ServiceSelfcheckFailed, "legacy-output", "untrusted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			output, _ := captureParts(t, "ctrld-1.5.0-s2.txt")
			out := filepath.Join(w.dir, "ctrld-output.txt")
			require.NoError(t, os.WriteFile(out, []byte(output), 0o600))
			svcLog := filepath.Join(w.dir, tc.file)
			target := svcLog
			if tc.symlink {
				target = filepath.Join(w.dir, "elsewhere.log")
				require.NoError(t, os.Symlink(target, svcLog))
			}
			if tc.before != "" {
				require.NoError(t, os.WriteFile(target, []byte(tc.before), 0o600))
			}
			a := standin.Action{CatFile: out, Exit: 1}
			if tc.append != "" {
				a.AppendFiles = map[string]string{svcLog: tc.append + canaryToken + " FTL " + canaryResolver + "\n"}
			}
			w.script(standin.Script{Version: "v1.5.0", Start: a, Status: standin.Action{NeedFile: w.serviceFile}})
			r := w.run("--resolver", canaryResolver, "--retries", "0", "--timeout", "60s", "--service-log", svcLog)
			w.assertFailure(r, tc.code, tc.source)
			assert.Equal(t, tc.state, w.record().ServiceLog)
		})
	}
}

// The admin's flag after -- that this ctrld does not know: cobra's error
// is a usage error, and the flag's name (which may be a pasted token) goes
// nowhere.
func TestCobraUnknownFlagAfterDashDash(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--bogus-flag", "--" + canaryLower} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			output, _ := captureParts(t, "ctrld-1.5.0-s5.txt")
			output = strings.ReplaceAll(output, "--bogus-flag", flag)
			w.script(standin.Script{Version: "v1.5.0", Start: standin.Action{Stderr: strings.Split(strings.TrimRight(output, "\n"), "\n"), Exit: 1}})
			r := w.run("--token", canaryToken, "--retries", "0", "--", flag)
			w.assertFailure(r, codes.InstallerUsage, "legacy-output")
			assert.Equal(t, 61, r.exit)
			assert.Equal(t, "ctrld-install: error: ctrld refused a flag or a value given after -- (the extra flags for ctrld start)\n", r.stderr)
			require.Len(t, w.argv(), 1)
			assert.Equal(t, []string{w.fake, "start", "--cd-org", canaryToken, flag}, w.argv()[0].Argv)
		})
	}
}

// ctrld 1.2.1 offline with a resolver ID: its output ends on an unrelated
// fatal after failing to fetch its configuration.
func TestOfflineResolverOn121(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	output, _ := captureParts(t, "ctrld-1.2.1-s2.txt")
	out := filepath.Join(w.dir, "ctrld-output.txt")
	require.NoError(t, os.WriteFile(out, []byte(output), 0o600))
	w.script(standin.Script{Version: "v1.2.1-0c99d27", Start: standin.Action{CatFile: out, Exit: 1}})
	r := w.run("--resolver", canaryResolver, "--retries", "0", "--service-log", filepath.Join(w.dir, "none.log"))
	assert.Contains(t, []int{31, 52}, r.exit, r.stdout+r.stderr)
	c, ok := codes.ByExit(r.exit)
	require.True(t, ok)
	w.assertFailure(r, c.Name, "legacy-output")
	require.NotNil(t, w.record().CtrldVersion)
	assert.Equal(t, "1.2.1", *w.record().CtrldVersion)
}
