package parse

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"strings"
)

// ListenerAddr returns the address ctrld serves DNS on, from a ctrld.toml
// as ctrld 1.5.0 writes it (captures/ctrld-1.5.0-toml-cd.txt):
//
//	[listener]
//	  [listener.0]
//	    ip = '127.0.0.1'
//	    port = 53
//
// It reads the keys ip and port of the section [listener.0] only (ctrld
// serves its first listener; its sub-tables such as [listener.0.policy]
// end it) and joins them as "ip:port" ("[::1]:53" for IPv6). ok is false
// when the section, either key, or a valid value is missing. It is a line
// reader, not a TOML parser: single or double quotes, any indentation, and
// a trailing comment are all it tolerates.
func ListenerAddr(toml []byte) (addr string, ok bool) {
	var ip, port string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(toml))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			if in {
				break
			}
			in = tableName(line) == "listener.0"
			continue
		}
		if !in {
			continue
		}
		key, value, found := strings.Cut(line, "=")
		if !found {
			continue
		}
		switch strings.TrimSpace(key) {
		case "ip":
			ip = unquote(value)
		case "port":
			port = strings.TrimSpace(stripComment(value))
		}
	}
	return joinAddr(ip, port)
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

// tableName is the name of a "[name]" header, spaces inside the brackets
// ignored; "" for an array of tables or anything else.
func tableName(line string) string {
	line = stripComment(line)
	if strings.HasPrefix(line, "[[") || !strings.HasSuffix(line, "]") {
		return ""
	}
	return strings.TrimSpace(line[1 : len(line)-1])
}

// unquote returns the string in a 'literal' or "basic" TOML value, ""
// when it is not one.
func unquote(v string) string {
	v = strings.TrimSpace(v)
	if len(v) < 2 || (v[0] != '\'' && v[0] != '"') {
		return ""
	}
	end := strings.IndexByte(v[1:], v[0])
	if end < 0 {
		return ""
	}
	return v[1 : 1+end]
}

// stripComment drops a "# comment" from a value that holds no quotes.
func stripComment(v string) string {
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// ListenFlag returns the address of a --listen flag in a daemon's command
// line (the arguments of `ctrld run` in a service definition), as
// "--listen ADDR" or "--listen=ADDR"; the last one wins, as with pflag.
// ok is false when there is none or its value is not an "ip:port" with an
// IP literal (what ctrld's --listen takes); the address comes back
// normalised, as ListenerAddr's does.
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
