package explain

import (
	"errors"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// ProfileUse says that an exit profile turns a code into an exit status
// other than the code's own, so a consumer shows that status instead.
type ProfileUse struct {
	Profile profile.Name
	Code    codes.Code
	Skipped bool // the status is for a run that found ctrld healthy and did nothing
	// Truncated says the profile's status is above 255 and the number
	// asked about is what macOS and Linux keep of it.
	Truncated bool
	Status    int // the profile's exit status before truncation
}

// Answer is what an input to explain resolved to.
type Answer struct {
	Lines    []LineKind     // the kinds of ctrld-install lines pasted, in order
	Codes    []codes.Code   // the registered codes named, in order of appearance
	Words    []states.State // states named
	Exit     int            // the exit status asked about, when the input is a number
	IsExit   bool
	FromIME  bool         // the exit status is the IME log's lpExitCode
	Profiles []ProfileUse // exit profiles that map some code to Exit
	Shell    *ShellStatus // what else reports Exit, when something does
	// Check is what Exit means when a check (verify, a detection script)
	// reports it rather than install.
	Check    *CheckExit
	Intune   *IntuneStatus   // a number Intune itself reports
	FileWave *FileWaveStatus // a negative status FileWave reports for a script
	PIN      *PINAdvice      // an uninstall refused for its deactivation PIN
	// What the platforms' installers report about the project's packages
	// (installers.go): msiexec's status Exit, macOS Installer's failure
	// sentence, the .deb's maintainer script lines.
	MSI *MSIStatus
	Mac *MacInstallerFailure
	Deb []DebLine
}

// CheckExit is the state an exit status means from verify and the
// detection scripts that run it.
type CheckExit struct {
	Exit  int
	State states.State
}

// checkExits: verify ends "not installed (exit 54)" on a device with no
// service definition, and a detection script that runs it (Munki
// installcheck, Kandji audit, Intune detect.ps1) reports that 54, which
// install uses for SERVICE_NOT_REGISTERED.
var checkExits = map[int]string{54: states.NotInstalled}

// PINAdvice is what an uninstall refused by ctrld's deactivation PIN
// needs, as far as the pasted lines tell a missing PIN from a wrong one.
// ctrld exits 126 for both; only its own line says which: "deactivation
// pin is required" when none was given, "is invalid" when the one given
// is not the device's.
type PINAdvice struct {
	Missing, Wrong bool
}

// Errors of Resolve. Their text is fixed: it never repeats the input.
var (
	ErrEmpty     = errors.New("explain needs a code, an exit status or a failure line")
	ErrUnknown   = errors.New("the input is not a registered code, exit status or failure line")
	ErrDisagrees = errors.New("the failure line does not agree with the registry: its stage or exit status is not the code's")
)

// exitPhrases are what tools write before an exit status, as admins paste
// them, matched in any case with spaces, hyphens or underscores between
// the words (or none):
//
//	Jamf policy log     "Script exit code: 41", "Error running script: return code was 41."
//	Munki Install.log   "FAILED with return code: 41"
//	Intune's portal     "Error code: 0x80070643"
//	shells, Go          "exit status 41", "exit code 41", "exit 41", "exited with code 41"
//
// Longer phrases come first so a shorter one does not stop a match early.
var exitPhrases = []string{
	"error running script: return code was",
	"failed with return code",
	"script exit code",
	"return code was",
	"return code",
	"exited with code",
	"exited with status",
	"exit status",
	"exit code",
	"error code",
	"exit",
}

// The patterns are compiled on first use: every run of ctrld-install, an
// MDM install included, would otherwise pay for them at start-up.
var (
	// exitRE is an exit status alone, in decimal or in hexadecimal as
	// Windows and Intune show it ("0x29", "0x00000652"), after one of
	// exitPhrases, in parentheses, or with a closing full stop. A decimal
	// may be negative: Intune shows 32-bit statuses signed, and FileWave
	// its own statuses for a script that did not end by itself.
	exitRE = sync.OnceValue(func() *regexp.Regexp {
		phrases := make([]string, len(exitPhrases))
		for i, p := range exitPhrases {
			words := strings.Fields(p)
			for j, w := range words {
				words[j] = regexp.QuoteMeta(w)
			}
			phrases[i] = strings.Join(words, `[ \t_-]*`)
		}
		return regexp.MustCompile(`(?i)^\(?(?:(` + strings.Join(phrases, "|") + `)[ \t:=]*)?` +
			`(0x[0-9a-f]{1,8}|-?[0-9]{1,10})\)?\.?$`)
	})
	// nameRE finds the forms that name a code without the identifier
	// grammar, in any case: an extension attribute's value, a record's
	// "code" and a bare code=.
	nameRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)<result>\s*([a-z_]*)\s*</result>` +
			`|"code"\s*:\s*"([a-z_]+)"` +
			`|\bcode=([a-z_]+)`)
	})
)

// parseExit reads s as an exit status alone (see exitRE).
func parseExit(s string) (int, bool) {
	n, _, ok := parseExitPhrase(s)
	return n, ok
}

// parseExitPhrase is parseExit that also says whether one of exitPhrases
// came before the number.
func parseExitPhrase(s string) (n int, phrased, ok bool) {
	m := exitRE().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, false, false
	}
	n, ok = parseNumber(strings.ToLower(m[2]))
	return n, m[1] != "", ok
}

// parseNumber reads an exit status in decimal or, with "0x", in
// hexadecimal (lower-case).
func parseNumber(digits string) (int, bool) {
	if hex, ok := strings.CutPrefix(digits, "0x"); ok {
		n, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return 0, false
		}
		// Windows and Intune often show a failed install's exit status as
		// the HRESULT that wraps it (HRESULT_FROM_WIN32): MSI's 1603 is the
		// well-known 0x80070643, and 1618 is 0x80070652.
		if n&0xffff0000 == 0x80070000 {
			n &= 0xffff
		}
		return int(n), true
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	// The same HRESULT shown as a signed decimal (-2147023278 is
	// 0x80070652, 1618).
	if n < 0 && n >= -1<<31 {
		if v := uint32(int32(n)); v&0xffff0000 == 0x80070000 {
			return int(v & 0xffff), true
		}
	}
	return n, true
}

// exitOnLines finds the exit status of a pasted block of lines that holds
// no identifier: a Jamf policy log shows "Script exit code: 41" on one line
// and "Error running script: return code was 41." on another. Only lines
// that name what the number is count (a bare number in a log may be
// anything), and they must all agree.
func exitOnLines(s string) (int, bool) {
	found, n := false, 0
	for line := range strings.Lines(s) {
		if m, phrased, ok := parseExitPhrase(line); ok && phrased {
			if found && m != n {
				return 0, false
			}
			found, n = true, m
		}
	}
	return n, found
}

// Resolve finds what input names: a code name (any case, with spaces or
// hyphens for underscores), a state word, an exit status ("41", "exit
// 41", the IME log's "lpExitCode 41"), a number Intune reports about a
// Win32 app, or text pasted from a log holding ctrld-install's lines,
// failure lines, "<result>CODE</result>" or a record. Failure lines count
// only when their stage and exit status agree with the registry.
func Resolve(input string) (Answer, error) {
	s := strings.TrimSpace(input)
	if s == "" {
		return Answer{}, ErrEmpty
	}
	if c, ok := codes.LookupFold(normalName(s)); ok {
		return Answer{Codes: []codes.Code{c}}, nil
	}
	if w, ok := states.Lookup(normalName(s)); ok {
		return Answer{Words: []states.State{w}}, nil
	}
	var a Answer
	a.Intune, _ = intuneStatusIn(s)
	if n, ok := parseExit(s); ok && a.Intune == nil {
		return exitAnswer(n)
	}
	a.Lines = linesIn(s)
	disagrees := false
	seen := map[string]bool{}
	addCode := func(c codes.Code) {
		if !seen["code "+c.Name] {
			seen["code "+c.Name] = true
			a.Codes = append(a.Codes, c)
		}
	}
	addWord := func(w states.State) {
		if !seen["word "+w.Word] {
			seen["word "+w.Word] = true
			a.Words = append(a.Words, w)
		}
	}
	add := func(name string) {
		name = strings.ToUpper(name)
		if c, ok := codes.Lookup(name); ok {
			addCode(c)
		} else if w, ok := states.Lookup(name); ok {
			addWord(w)
		}
	}
	rest, jsonWords := recordStates(s)
	for _, w := range jsonWords {
		addWord(w)
	}
	for _, f := range namesIn(rest) {
		switch {
		case f.disagrees:
			disagrees = true
		default:
			add(f.name)
		}
	}
	for _, k := range a.Lines {
		switch {
		case k.Code != "":
			addCode(codes.Must(k.Code))
		case k.hasWord:
			addWord(mustWord(k.Word))
		}
	}
	for line := range strings.Lines(s) {
		if i := strings.Index(line, report.Prefix+"next step: "); i >= 0 {
			if c, ok := nextStepOf(line[i+len(report.Prefix+"next step: "):]); ok {
				addCode(c)
			}
		}
	}
	a.Mac = macInstallerIn(s)
	a.Deb = debLinesIn(s)
	for _, l := range a.Deb {
		if l.Code != nil {
			addCode(*l.Code)
			if l.uninstall && l.Code.Name == codes.DeactivationPinRequired {
				a.PIN = &PINAdvice{}
			}
		}
	}
	if p := pinAdvice(s, a.Lines); p != nil || a.PIN == nil {
		a.PIN = p
	}
	if a.PIN != nil || strings.Contains(strings.ToLower(s), "deactivation pin is invalid") {
		addCode(codes.Must(codes.DeactivationPinRequired))
	}
	if len(a.Codes)+len(a.Words) == 0 {
		if disagrees {
			return Answer{}, ErrDisagrees
		}
		n, ok := exitOnLines(s)
		fromIME := false
		if !ok {
			n, ok = imeExit(s)
			fromIME = ok
		}
		if ok {
			if e, err := exitAnswer(n); err == nil {
				e.Lines, e.Intune, e.FromIME = a.Lines, a.Intune, fromIME
				return e, nil
			}
		}
	}
	if len(a.Codes)+len(a.Words)+len(a.Lines)+len(a.Deb) > 0 || a.Intune != nil || a.Mac != nil {
		return a, nil
	}
	return Answer{}, ErrUnknown
}

func mustWord(w string) states.State {
	s, ok := states.Lookup(w)
	if !ok {
		panic("explain: unknown state " + w)
	}
	return s
}

// recordStates reads the lines of s that are one JSON object each (an
// outcome record, a --json summary) for the states they report, which
// their "code" alone does not say: verify's "not installed", an uninstall,
// a run in progress. Those lines are blanked in rest, so their code is
// not read again as if it were the outcome.
func recordStates(s string) (rest string, words []states.State) {
	var b strings.Builder
	for line := range strings.Lines(s) {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "{") {
			b.WriteString(line)
			continue
		}
		r, err := record.DecodeUnchecked([]byte(t))
		if err != nil {
			b.WriteString(line)
			continue
		}
		word := ""
		switch {
		case r.Result == record.ResultNotInstalled:
			word = states.NotInstalled
		case r.Result == record.ResultRunning:
			word = states.Running
		case r.Result == record.ResultOK && r.Action == outcome.ActionUninstalled.String():
			word = states.Uninstalled
		}
		if word == "" {
			b.WriteString(line)
			continue
		}
		words = append(words, mustWord(word))
		b.WriteString(strings.Repeat(" ", len(line)-1) + "\n")
	}
	return b.String(), words
}

// pinAdvice says what an uninstall refused for its PIN needs: the pasted
// text holds uninstall's failure line for the PIN, or ctrld's own PIN line
// of an uninstall.
func pinAdvice(s string, lines []LineKind) *PINAdvice {
	lower := strings.ToLower(s)
	required := strings.Contains(lower, "deactivation pin is required")
	invalid := strings.Contains(lower, "deactivation pin is invalid")
	uninstall := strings.Contains(s, codes.FailureLine(codes.VerbUninstall, codes.Must(codes.DeactivationPinRequired)))
	for _, k := range lines {
		uninstall = uninstall || strings.HasPrefix(k.Shown, "running ctrld uninstall")
	}
	// ctrld start sends PIN 0 and gets "is invalid" too: without an
	// uninstall around it, that line is an install's refusal.
	if !uninstall && !required {
		return nil
	}
	return &PINAdvice{Missing: required, Wrong: invalid && uninstall}
}

// found is a code name in pasted text, at offset at, as written.
type found struct {
	at        int
	name      string
	disagrees bool // an identifier that names no code, or not with its stage and exit
}

// namesIn lists the codes s names, in order of appearance: identifiers read
// by the one grammar (codes.FindTriple; the verb before "failed:" is not
// read, so a check's line counts as an install's), then the other forms
// (nameRE) in the text around them, so an identifier's code= is not read
// again on its own. An identifier pasted in other letter case is not one;
// its code= still names the code.
func namesIn(s string) []found {
	var out []found
	rest := []byte(s)
	for off := 0; ; {
		t, start, end, ok := codes.FindTriple(rest[off:])
		if !ok {
			break
		}
		_, agrees := t.Code()
		out = append(out, found{at: off + start, name: string(t.Name), disagrees: !agrees})
		for i := off + start; i < off+end; i++ {
			rest[i] = ' '
		}
		off += end
	}
	for _, m := range nameRE().FindAllStringSubmatchIndex(string(rest), -1) {
		for g := 1; g < len(m)/2; g++ {
			if m[2*g] >= 0 {
				out = append(out, found{at: m[0], name: s[m[2*g]:m[2*g+1]]})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b found) int { return a.at - b.at })
	return out
}

// exitAnswer is what exit status n means: the code registered with it,
// the exit profiles that report it for another code, and what else
// reports it.
func exitAnswer(n int) (Answer, error) {
	a := Answer{Exit: n, IsExit: true, Profiles: profileUses(n), Shell: shellStatus(n), FileWave: fileWaveStatus(n), MSI: msiStatus(n)}
	if c, ok := codes.ByExit(n); ok {
		a.Codes = []codes.Code{c}
	}
	if w, ok := checkExits[n]; ok {
		a.Check = &CheckExit{Exit: n, State: mustWord(w)}
	}
	if len(a.Codes) == 0 && len(a.Profiles) == 0 && a.Shell == nil && a.FileWave == nil && a.MSI == nil {
		return Answer{}, ErrUnknown
	}
	return a, nil
}

// normalName turns "listener bind-failed" into "LISTENER_BIND_FAILED".
func normalName(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, s)
}

// profileUses lists the codes an exit profile reports as exit status n,
// where n is not the code's own exit status.
func profileUses(n int) []ProfileUse {
	var out []ProfileUse
	for _, p := range profile.Names {
		for _, c := range codes.All() {
			for _, skipped := range []bool{false, true} {
				if skipped && !c.IsOK() {
					continue
				}
				st := profile.ExitStatus(p, c, skipped)
				if st == c.Exit {
					continue
				}
				switch {
				case st == n:
					out = append(out, ProfileUse{Profile: p, Code: c, Skipped: skipped, Status: st})
				case st > 255 && st&0xff == n:
					out = append(out, ProfileUse{Profile: p, Code: c, Skipped: skipped, Status: st, Truncated: true})
				}
			}
		}
	}
	return out
}

// Nearest lists up to max registered codes closest to what input seems to
// name: codes whose words it shares (allowing a typo per word), then by
// edit distance; for a number, the codes with the nearest exit statuses.
// It returns nothing rather than a poor guess.
//
// Only input that looks like a code gets suggestions: a number in a
// stage's exit range, or a word of letters and underscores (alone, or as
// a failure line's, a record's or an extension attribute's code). Exit 1
// is not a near miss of OK, and a pasted sentence is not a typo.
func Nearest(input string, max int) []codes.Code {
	s := strings.TrimSpace(input)
	if n, ok := parseExit(s); ok {
		if !inStageRange(n) {
			return nil
		}
		return nearestExit(n, max)
	}
	var candidates []string
	for _, f := range namesIn(s) {
		if f.name != "" {
			candidates = append(candidates, normalName(f.name))
		}
	}
	if len(candidates) == 0 && codeShaped(normalName(s)) {
		candidates = []string{normalName(s)}
	}
	type scored struct {
		c      codes.Code
		shared int
		dist   int
		order  int
	}
	best := map[string]scored{}
	for _, cand := range candidates {
		if len(cand) > maxNameLen {
			continue
		}
		for i, c := range codes.All() {
			sc := scored{c: c, shared: sharedWords(cand, c.Name), dist: EditDistance(cand, c.Name), order: i}
			if sc.shared == 0 && sc.dist > len(c.Name)/3 {
				continue
			}
			if old, ok := best[c.Name]; !ok || better(sc.shared, sc.dist, old.shared, old.dist) {
				best[c.Name] = sc
			}
		}
	}
	list := make([]scored, 0, len(best))
	for _, sc := range best {
		list = append(list, sc)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.shared != b.shared || a.dist != b.dist {
			return better(a.shared, a.dist, b.shared, b.dist)
		}
		return a.order < b.order
	})
	var out []codes.Code
	for i := 0; i < len(list) && i < max; i++ {
		out = append(out, list[i].c)
	}
	return out
}

// inStageRange reports whether n is in a stage's exit range, where the
// exit statuses next to a registered one are codes' neighbours.
func inStageRange(n int) bool {
	for _, st := range codes.Stages {
		if lo, hi := st.ExitRange(); n >= lo && n <= hi {
			return true
		}
	}
	return false
}

// codeShaped reports whether s, normalised, is written the way a code is:
// capital letters and underscores, starting with a letter, and at least
// half its words the registry's (allowing a typo in a long word), so a
// sentence typed in place of a code is not taken for a mistyped one.
func codeShaped(s string) bool {
	if len(s) < 2 || len(s) > maxNameLen || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'A' && s[i] <= 'Z' || s[i] == '_') {
			return false
		}
	}
	known, all := 0, 0
	for _, w := range strings.Split(s, "_") {
		if w == "" {
			continue
		}
		all++
		if registryWord(w) {
			known++
		}
	}
	return known*2 >= all
}

// registryWord reports whether w is a word of a code's name, or one typo
// away from one of four letters or more.
func registryWord(w string) bool {
	for _, c := range codes.All() {
		for _, cw := range strings.Split(c.Name, "_") {
			if w == cw || len(w) >= 4 && EditDistance(w, cw) <= 1 {
				return true
			}
		}
	}
	return false
}

// maxNameLen bounds the text compared by edit distance; longer text is not
// a mistyped code (and may be a pasted token).
const maxNameLen = 64

func better(shared, dist, oShared, oDist int) bool {
	if shared != oShared {
		return shared > oShared
	}
	return dist < oDist
}

func nearestExit(n, max int) []codes.Code {
	all := codes.All()
	sort.SliceStable(all, func(i, j int) bool { return abs(all[i].Exit-n) < abs(all[j].Exit-n) })
	var out []codes.Code
	for _, c := range all {
		if len(out) == max || abs(c.Exit-n) > 9 {
			break
		}
		out = append(out, c)
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// commonWords appear in so many codes that sharing them says nothing.
var commonWords = map[string]bool{"FAILED": true}

// sharedWords counts the words of a that match a word of name exactly or,
// for words of four letters or more, with one typo.
func sharedWords(a, name string) int {
	n := 0
	nameWords := strings.Split(name, "_")
	for _, w := range strings.Split(a, "_") {
		if w == "" || commonWords[w] {
			continue
		}
		for _, nw := range nameWords {
			if commonWords[nw] {
				continue
			}
			if w == nw || (len(w) >= 4 && EditDistance(w, nw) <= 1) {
				n++
				break
			}
		}
	}
	return n
}

// EditDistance is the Levenshtein distance between two short ASCII strings.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
