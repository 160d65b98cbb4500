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

// flagsCtrldAdds are the flags ctrld start adds to the daemon's command
// line itself, with a value after "=": they are not the user's.
var flagsCtrldAdds = []string{"--homedir", "--config"}

// flagsCtrldDrops are the user's flags ctrld start leaves out of the
// service definition, with their values (removeOrgFlagsFromArgs).
var flagsCtrldDrops = []string{FeatureCdOrg, "--custom-hostname", "--nextdns"}

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

// Flags compares the user's flags for ctrld start that the daemon runs with
// (every flag but the resolver, the ones ctrld adds, and --iface=auto when
// the user gave no --iface) with extra, the flags given after -- now, less
// the ones ctrld leaves out of the definition. The order is kept: ctrld
// copies the flags in order.
func (d Definition) Flags(extra []string) Same {
	flags, ok := d.flags()
	if !ok {
		return SameUnknown
	}
	want := withoutFlags(extra, flagsCtrldDrops, true)
	userIface := slices.ContainsFunc(want, func(f string) bool { return f == "--iface" || strings.HasPrefix(f, "--iface=") })
	var have []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		switch {
		case f == FeatureCd:
			i++ // and its value
		case strings.HasPrefix(f, FeatureCd+"="):
		case f == "--iface=auto" && !userIface:
		case hasFlag(f, flagsCtrldAdds):
		default:
			have = append(have, f)
		}
	}
	if slices.Equal(have, want) {
		return SameYes
	}
	return SameNo
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
