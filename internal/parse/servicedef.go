package parse

import (
	"bufio"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
)

// MaxServiceDefinition bounds what is read of a service definition: ctrld's
// init script is about 2 KiB, its unit and plist smaller.
const MaxServiceDefinition = 64 << 10

// ErrNoDefinition is a service definition whose daemon command line could
// not be found.
var ErrNoDefinition = errors.New("not a service definition ctrld writes")

// Definition is what a service definition says of the daemon it starts.
// Its fields hold the definition's own words (the resolver ID among them):
// they are compared, never printed.
type Definition struct {
	// args is the daemon's argv, the ctrld binary first.
	args []string
	// PIDFile is where a SysV init script keeps the daemon's process ID,
	// with $name already replaced by name; "" for other definitions.
	PIDFile string
}

// ServiceDefinition reads the daemon's command line from the service
// definition ctrld writes: its SysV init script (cmd="..."), a systemd unit
// (ExecStart=) or a launchd plist (ProgramArguments). name is the
// definition's file name, which a SysV script uses as $name.
func ServiceDefinition(r io.Reader, name string) (Definition, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxServiceDefinition+1))
	if err != nil || len(b) > MaxServiceDefinition {
		return Definition{}, ErrNoDefinition
	}
	s := string(b)
	if strings.Contains(s, "<plist") {
		return plistDefinition(s)
	}
	var d Definition
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, MaxServiceDefinition)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "cmd="):
			d.args = strings.Fields(shellValue(strings.TrimPrefix(line, "cmd=")))
		case strings.HasPrefix(line, "pid_file="):
			d.PIDFile = strings.ReplaceAll(shellValue(strings.TrimPrefix(line, "pid_file=")), "$name", name)
		case strings.HasPrefix(line, "ExecStart="):
			d.args = shellWords(strings.TrimPrefix(line, "ExecStart="))
		}
	}
	if len(d.args) == 0 || d.args[0] == "" {
		return Definition{}, ErrNoDefinition
	}
	return d, nil
}

// WindowsDefinition reads the daemon's command line from a Windows
// service's image path, split as the C runtime splits a command line.
func WindowsDefinition(imagePath string) (Definition, error) {
	args := windowsArgs(imagePath)
	if len(args) == 0 || args[0] == "" {
		return Definition{}, ErrNoDefinition
	}
	return Definition{args: args}, nil
}

// shellValue is the value a sh assignment gives: quoted and bare parts
// joined, quotes removed. The init script writes cmd="/path "run" "--cd"
// "ID"", whose inner quotes close and reopen the string.
func shellValue(s string) string {
	var b strings.Builder
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case c == quote:
			quote = 0
		case quote == 0 && (c == ' ' || c == '\t' || c == '#'):
			return b.String()
		case c == '\\' && quote != '\'' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// shellWords splits a systemd command line: words separated by blanks, a
// double- or single-quoted word kept whole.
func shellWords(s string) []string {
	var words []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && (c == '"' || c == '\''):
			quote, in = c, true
		case c == quote:
			quote = 0
		case quote == 0 && (c == ' ' || c == '\t'):
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		case c == '\\' && quote != '\'' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			in = true
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, b.String())
	}
	return words
}

// windowsArgs splits a command line by the rules of CommandLineToArgvW:
// the first word by quotes alone, the rest with backslashes escaping
// quotes.
func windowsArgs(s string) []string {
	var args []string
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return nil
	}
	if s[0] == '"' {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return []string{s[1:]}
		}
		args = append(args, s[1:1+end])
		s = s[2+end:]
	} else {
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			return []string{s}
		}
		args = append(args, s[:end])
		s = s[end:]
	}
	var b strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			n := 0
			for i < len(s) && s[i] == '\\' {
				n++
				i++
			}
			if i < len(s) && s[i] == '"' {
				b.WriteString(strings.Repeat(`\`, n/2))
				if n%2 == 1 {
					b.WriteByte('"')
				} else {
					quoted = !quoted
				}
			} else {
				b.WriteString(strings.Repeat(`\`, n))
				i--
			}
			in = true
		case c == '"':
			quoted, in = !quoted, true
		case !quoted && (c == ' ' || c == '\t'):
			if in {
				args = append(args, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		args = append(args, b.String())
	}
	return args
}

func plistDefinition(s string) (Definition, error) {
	dec := xml.NewDecoder(strings.NewReader(s))
	dec.Strict = false
	var d Definition
	key, inArgs := "", false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			if end, ok := tok.(xml.EndElement); ok && end.Name.Local == "array" {
				inArgs = false
			}
			continue
		}
		switch el.Name.Local {
		case "key":
			var k string
			if dec.DecodeElement(&k, &el) == nil {
				key = strings.TrimSpace(k)
			}
		case "array":
			inArgs = key == "ProgramArguments"
		case "string":
			var v string
			if dec.DecodeElement(&v, &el) == nil && inArgs {
				d.args = append(d.args, v)
			}
		}
	}
	if len(d.args) == 0 || d.args[0] == "" {
		return Definition{}, ErrNoDefinition
	}
	return d, nil
}

// Same says whether a part of what is installed matches the request: yes,
// no, or that the definition does not tell.
type Same int

const (
	SameUnknown Same = iota
	SameYes
	SameNo
)

// daemonCommand is the word ctrld start puts before the flags it keeps.
const daemonCommand = "run"

// flagsCtrldDropsWithToken are the user's flags ctrld start leaves out of
// the service definition, with their values, when it provisions with a
// token (removeOrgFlagsFromArgs, called only on that path): the token
// itself and the hostname sent with it. With --cd they stay in.
var flagsCtrldDropsWithToken = []string{FeatureCdOrg, "--custom-hostname"}

// Resolver compares the resolver the daemon was provisioned with (`--cd ID`
// or `--cd=ID`; after a token, the ID the token resolved to) with id.
func (d Definition) Resolver(id string) Same {
	flags, ok := d.flags()
	if !ok {
		return SameUnknown
	}
	for i, f := range flags {
		v, found := "", false
		switch {
		case f == FeatureCd && i+1 < len(flags):
			v, found = flags[i+1], true
		case strings.HasPrefix(f, FeatureCd+"="):
			v, found = strings.TrimPrefix(f, FeatureCd+"="), true
		}
		if found {
			if v == id {
				return SameYes
			}
			return SameNo
		}
	}
	return SameNo
}

// Flags compares the flags the daemon runs with that came from the user
// (ServiceFlags) with the ones ctrld start would write for extra, the
// flags given after -- now (RequestedFlags); byToken says the run
// provisions with a token rather than a resolver. Both sides lose exactly
// what ctrld adds or drops itself and nothing else, so a --config the admin
// gave is compared like any other flag. The order is kept: ctrld copies
// the flags in order.
func (d Definition) Flags(extra []string, byToken bool) Same {
	flags, ok := d.flags()
	if !ok {
		return SameUnknown
	}
	want := RequestedFlags(extra, byToken)
	if slices.Equal(ServiceFlags(flags, want), want) {
		return SameYes
	}
	return SameNo
}

// RequestedFlags are the flags of extra that ctrld start copies into the
// service's arguments: all of them in order, less empty words (ctrld 1.4
// and later filter them out; a service file cannot keep one) and, with a
// token, less --cd-org and --custom-hostname with their values. Nothing
// else is dropped: a flag ctrld would refuse (--homedir, which only `run`
// knows; --nextdns, which cannot go with --cd) stays, so the request
// differs from what runs and ctrld start says why before it changes
// anything.
func RequestedFlags(extra []string, byToken bool) []string {
	var out []string
	for _, a := range extra {
		if a != "" {
			out = append(out, a)
		}
	}
	if byToken {
		out = withoutFlags(out, flagsCtrldDropsWithToken, true)
	}
	return out
}

// ServiceFlags are the service's arguments after `run` less what ctrld
// start put there itself, for a request whose flags are want
// (RequestedFlags): the resolver, wherever it is (--cd ID as ctrld-install
// passes it, --cd=ID as a token resolved; Resolver compares it), empty
// words, and the words every release appends after the user's flags, in
// the order it appends them: --iface=auto unless want names an interface,
// --homedir=<home>, and --config=<home>/ctrld.toml unless want names a
// config (--config, -c), when ctrld adds none and the admin's is compared.
func ServiceFlags(flags, want []string) []string {
	var have []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		switch {
		case f == FeatureCd:
			i++ // and its value
		case strings.HasPrefix(f, FeatureCd+"="), f == "":
		default:
			have = append(have, f)
		}
	}
	// From the end back: what ctrld appended last comes off first, each
	// at most once, so an earlier word of the same form is the user's.
	tail := []func(string) bool{
		func(f string) bool {
			return !slices.ContainsFunc(want, namesConfig) && strings.HasPrefix(f, "--config=")
		},
		func(f string) bool { return strings.HasPrefix(f, "--homedir=") },
		func(f string) bool { return !slices.ContainsFunc(want, namesIface) && f == "--iface=auto" },
	}
	for _, added := range tail {
		if n := len(have); n > 0 && added(have[n-1]) {
			have = have[:n-1]
		}
	}
	return have
}

// namesIface reports whether f gives ctrld start an interface; ctrld then
// appends no --iface=auto.
func namesIface(f string) bool { return hasFlag(f, []string{"--iface"}) }

// namesConfig reports whether f gives ctrld start a config file: --config
// or --config=PATH, or its shorthand -c, alone (-c PATH), with its value
// (-cPATH, -c=PATH) or after the persistent shorthands that take none
// (-vc PATH, -sc PATH). ctrld then appends no --config of its own.
func namesConfig(f string) bool {
	if hasFlag(f, []string{"--config"}) {
		return true
	}
	if len(f) < 2 || f[0] != '-' || f[1] == '-' {
		return false
	}
	for _, c := range f[1:] {
		switch c {
		case 'c':
			return true
		case 'v', 's':
		default:
			return false
		}
	}
	return false
}

// flags are the definition's arguments after `run`.
func (d Definition) flags() ([]string, bool) {
	if len(d.args) < 2 || d.args[1] != daemonCommand {
		return nil, false
	}
	return d.args[2:], true
}

// Binary is the ctrld binary the definition starts.
func (d Definition) Binary() string {
	if len(d.args) == 0 {
		return ""
	}
	return d.args[0]
}

func hasFlag(f string, names []string) bool {
	for _, n := range names {
		if f == n || strings.HasPrefix(f, n+"=") {
			return true
		}
	}
	return false
}

// withoutFlags drops the named flags; withValue drops the word after a
// flag given without "=" too.
func withoutFlags(args, names []string, withValue bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if hasFlag(a, names) {
			if withValue && !strings.Contains(a, "=") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// Provisioning is what the service was provisioned with, as ctrld start
// would be given it again to bring it back: the resolver ID (after a
// token, the one the token resolved to) and the admin's extra flags, less
// what ctrld added itself. ok is false when the definition names no
// resolver.
func (d Definition) Provisioning() (resolver string, extra []string, ok bool) {
	flags, ok := d.flags()
	if !ok {
		return "", nil, false
	}
	for i, f := range flags {
		switch {
		case f == FeatureCd && i+1 < len(flags):
			resolver = flags[i+1]
		case strings.HasPrefix(f, FeatureCd+"="):
			resolver = strings.TrimPrefix(f, FeatureCd+"=")
		}
	}
	if resolver == "" {
		return "", nil, false
	}
	return resolver, ServiceFlags(flags, nil), true
}

// Config is the daemon's config file (--config, -c), "" when none is named.
func (d Definition) Config() string { return d.value("--config", "-c") }

// Listen is the daemon's --listen address (no-config mode), "" when none.
func (d Definition) Listen() string { return d.value("--listen", "") }

// value is the value of the flag long (or its shorthand short) in the
// daemon's arguments: "--long V", "--long=V", "-s V".
func (d Definition) value(long, short string) string {
	flags, _ := d.flags()
	for i, f := range flags {
		switch {
		case (f == long || (short != "" && f == short)) && i+1 < len(flags):
			return flags[i+1]
		case strings.HasPrefix(f, long+"="):
			return strings.TrimPrefix(f, long+"=")
		}
	}
	return ""
}
