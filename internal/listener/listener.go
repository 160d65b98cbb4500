// Package listener tells where ctrld serves DNS: its first listener in a
// ctrld.toml, read as the TOML ctrld itself reads (go-toml, which ctrld
// uses through viper), or the --listen of its daemon's arguments. It
// returns only an address it built from parsed, checked values, never text
// of its input, and says "cannot tell" rather than guess.
package listener

import (
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// State says how much a ctrld.toml tells of ctrld's listener.
type State int

const (
	// Unknown: the file cannot tell. It is not TOML, is longer
	// than MaxSize, or its first listener lacks a usable ip or port
	// (ctrld fills an empty one in at start, by probing what it can bind,
	// so the file alone does not say where it ended up). The zero value,
	// so that a forgotten state is never taken for an address.
	Unknown State = iota
	// Found: the address comes from the file's first listener.
	Found
	// Default: the file has no listener table at all, so ctrld
	// uses its built-in one, ip and port empty, which it fills in at start:
	// port 53 on 0.0.0.0 (127.0.0.1 on desktops and on Windows servers
	// running a DNS server), other addresses only when that one is taken.
	// The address returned is where that first choice answers, not a fact
	// read from the file. ctrld in --cd mode writes its listener into the
	// file, so a file it generated is never in this state.
	Default
)

// MaxSize bounds the ctrld.toml Addr reads; callers read up
// to one byte more, so that a longer file is refused rather than cut into
// something that may still parse.
const MaxSize = 256 << 10

// defaultListener is where ctrld's built-in listener answers first: port
// 53 on 0.0.0.0 or 127.0.0.1, both reached on loopback.
const defaultListener = "127.0.0.1:53"

// Addr returns the address to ask ctrld's listener on, from a
// ctrld.toml, read as ctrld 1.4 and 1.5 read it: TOML (the parser ctrld
// uses, pelletier/go-toml/v2), its keys compared without case as viper
// compares them, the first listener the one whose key is numerically
// lowest (ctrld's FirstListener), a port given as a string taken as
// mapstructure's weak decoding takes it. Every TOML form of a table
// (standard, inline, dotted or quoted keys) reads the same.
//
// A listener on every address (ip 0.0.0.0 or ::) is asked on loopback of
// the same family, 127.0.0.1 or ::1: ctrld's own self-check dials the
// unspecified address, which only some systems route to the host itself.
//
// addr is "" unless state is Found or Default; it is built
// from the parsed values, never copied from the input.
func Addr(b []byte) (addr string, state State) {
	if len(b) > MaxSize {
		return "", Unknown
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return "", Unknown
	}
	v, found, ok := lookup(doc, "listener")
	if !ok {
		return "", Unknown
	}
	if !found {
		return defaultListener, Default
	}
	listeners, isTable := v.(map[string]any)
	if !isTable {
		return "", Unknown
	}
	first, isTable := firstListener(listeners).(map[string]any)
	if !isTable {
		return "", Unknown
	}
	ipv, ipFound, ipOK := lookup(first, "ip")
	portv, portFound, portOK := lookup(first, "port")
	if !ipFound || !ipOK || !portFound || !portOK {
		return "", Unknown
	}
	ip, isString := ipv.(string)
	port, portValid := portOf(portv)
	if !isString || !portValid {
		return "", Unknown
	}
	parsed := net.ParseIP(ip)
	if parsed == nil {
		return "", Unknown
	}
	switch {
	case parsed.IsUnspecified() && parsed.To4() != nil:
		parsed = net.IPv4(127, 0, 0, 1)
	case parsed.IsUnspecified():
		parsed = net.IPv6loopback
	}
	return net.JoinHostPort(parsed.String(), strconv.Itoa(port)), Found
}

// lookup finds key in m without case, as viper does (it lower-cases every
// key). ok is false when two keys differ only in case: which one viper
// keeps depends on map order.
func lookup(m map[string]any, key string) (v any, found, ok bool) {
	for k, val := range m {
		if strings.EqualFold(k, key) {
			if found {
				return nil, true, false
			}
			v, found = val, true
		}
	}
	return v, found, true
}

// firstListener is ctrld's first listener: of the keys strconv.Atoi
// takes, the lowest, looked up again by its canonical spelling, so that
// "00" or "+0" alone are no listener, as in ctrld (which then fails).
// nil when there is none.
func firstListener(listeners map[string]any) any {
	var nums []int
	for k := range listeners {
		if n, err := strconv.Atoi(k); err == nil {
			nums = append(nums, n)
		}
	}
	if len(nums) == 0 {
		return nil
	}
	sort.Ints(nums)
	return listeners[strconv.Itoa(nums[0])]
}

// portOf is a TOML value as a port ctrld would bind: an integer, a float
// with no fraction, or a string strconv.ParseInt reads in base 0 (what
// mapstructure's weak decoding, which viper turns on, accepts), in 1 to
// 65535. Port 0, or an empty string, is one ctrld picks itself.
func portOf(v any) (int, bool) {
	var n int64
	switch p := v.(type) {
	case int64:
		n = p
	case float64:
		if p != math.Trunc(p) || p < 1 || p > 65535 {
			return 0, false
		}
		n = int64(p)
	case string:
		var err error
		if n, err = strconv.ParseInt(p, 0, 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if n < 1 || n > 65535 {
		return 0, false
	}
	return int(n), true
}

// joinAddr is ip and port, both checked, as "ip:port". What it returns is
// built from the parsed values, not the input, as the package promises.
func joinAddr(ip, port string) (string, bool) {
	parsed := net.ParseIP(ip)
	n, err := strconv.Atoi(port)
	if parsed == nil || err != nil || n < 1 || n > 65535 {
		return "", false
	}
	return net.JoinHostPort(parsed.String(), strconv.Itoa(n)), true
}

// ListenFlag returns the address of a --listen flag in a daemon's command
// line (the arguments of `ctrld run` in a service definition), as
// "--listen ADDR" or "--listen=ADDR"; the last one wins, as with pflag.
// ok is false when there is none or its value is not an "ip:port" with an
// IP literal (what ctrld's --listen takes); the address comes back
// normalised, as Addr's does.
func ListenFlag(args []string) (addr string, ok bool) {
	value, found := "", false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			i = len(args)
		case a == "--listen" && i+1 < len(args):
			value, found = args[i+1], true
			i++
		case strings.HasPrefix(a, "--listen="):
			value, found = strings.TrimPrefix(a, "--listen="), true
		}
	}
	if !found {
		return "", false
	}
	host, port, err := net.SplitHostPort(value)
	if err != nil {
		return "", false
	}
	return joinAddr(host, port)
}
