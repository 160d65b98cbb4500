// Package dnscheck asks a DNS listener one question to learn whether ctrld
// is the resolver on it: ctrld's own start and restart can report success
// while the daemon behind them is dead (see the 1.5.0 captures of a bad
// resolver, an unavailable listen address and a dying build), and a live
// resolver on the address may be another program's, so the evidence is an
// answer only ctrld gives.
//
// The question is QueryName, type A. ctrld answers it itself, without its
// upstream, with 0.0.0.0 (captures/ctrld-selfcheck-name.txt); any other
// resolver answers it as it answers any name under .test, which RFC 6761
// reserves: NXDOMAIN, as a rule. ctrld 1.3.6 is the first release whose
// source answers it; older ones send it upstream like any other name.
//
// It is not a resolver: it writes the few bytes of one query by hand and
// reads the header, the question and the answer section, nothing further.
package dnscheck

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"time"
)

// QueryName is the name ctrld answers itself.
const QueryName = "ctrld.test."

// Answer is what the listener said to the question.
type Answer int

const (
	// NoAnswer: no response to the query before the context ended, or the
	// address refused it (a closed port's ICMP message) or is not one.
	NoAnswer Answer = iota
	// Ctrld: a NOERROR response whose answer section holds the record
	// ctrld gives, QueryName A 0.0.0.0.
	Ctrld
	// Other: a well-formed response to the query that is not ctrld's
	// (NXDOMAIN, SERVFAIL, REFUSED, another address): a resolver is on the
	// address, and for ctrld 1.3.6 and later it is not ctrld.
	Other
)

// String names a for tests and logs; it holds nothing the listener sent.
func (a Answer) String() string {
	switch a {
	case Ctrld:
		return "ctrld"
	case Other:
		return "other"
	}
	return "no answer"
}

// Ask sends one query (type A for QueryName, recursion desired) over UDP
// to addr ("ip:port") and classifies the first well-formed response to it
// that arrives before ctx ends. A datagram that is not one (another ID, not
// a response, another question, malformed) is ignored and the read goes
// on, so stray or spoofed datagrams can delay the answer but not make it.
// An error ends the check with NoAnswer at once, so a caller that polls
// should ask again.
func Ask(ctx context.Context, addr string) Answer {
	if ctx.Err() != nil {
		return NoAnswer
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return NoAnswer
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// A context cancelled without a deadline must end the read too.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()

	id := uint16(rand.Uint32())
	if _, err := conn.Write(Query(id, QueryName)); err != nil {
		return NoAnswer
	}
	// Larger than any UDP payload, so a long answer is never cut short
	// into something that looks malformed.
	buf := make([]byte, 65536)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return NoAnswer
		}
		if a := classify(buf[:n], id); a != NoAnswer {
			if ctx.Err() != nil {
				return NoAnswer
			}
			return a
		}
	}
}

// Query is a DNS query message: header with id and RD set, one question
// (name, type A, class IN). name is dotted, the final dot optional.
func Query(id uint16, name string) []byte {
	msg := make([]byte, 12, 12+len(name)+6)
	binary.BigEndian.PutUint16(msg[0:], id)
	msg[2] = 0x01                          // RD
	binary.BigEndian.PutUint16(msg[4:], 1) // QDCOUNT
	start := 0
	for i := 0; i <= len(name); i++ {
		if i == len(name) || name[i] == '.' {
			if label := name[start:i]; label != "" {
				msg = append(msg, byte(len(label)))
				msg = append(msg, label...)
			}
			start = i + 1
		}
	}
	msg = append(msg, 0)          // the root
	msg = append(msg, 0, 1, 0, 1) // type A, class IN
	return msg
}

// QuestionsEnd returns the offset just past the question section of msg,
// whose header says how many questions there are; ok is false when they do
// not parse within msg.
func QuestionsEnd(msg []byte) (end int, ok bool) {
	if len(msg) < 12 {
		return 0, false
	}
	off := 12
	for range binary.BigEndian.Uint16(msg[4:]) {
		if _, off, ok = readName(msg, off); !ok || off+4 > len(msg) {
			return 0, false
		}
		off += 4 // type and class
	}
	return off, true
}

const (
	typeA   = 1
	classIN = 1
	rcodeOK = 0
)

// queryWire is QueryName as it is on the wire, lower case, uncompressed.
var queryWire = func() []byte {
	q := Query(0, QueryName)
	return q[12 : len(q)-4]
}()

// classify is what msg says, when it is a well-formed response to the
// query with id; NoAnswer when it is not one, for the caller to ignore.
//
// A response may leave the question out (some servers do for FORMERR or
// REFUSED); one that holds a question must hold ours, as RFC 5452 asks of
// a resolver that accepts an answer. ctrld copies it (its replies are made
// from the query).
func classify(msg []byte, id uint16) Answer {
	if len(msg) < 12 || binary.BigEndian.Uint16(msg) != id || msg[2]&0x80 == 0 {
		return NoAnswer
	}
	off := 12
	switch binary.BigEndian.Uint16(msg[4:]) {
	case 0:
	case 1:
		name, next, ok := readName(msg, off)
		if !ok || next+4 > len(msg) || !bytes.Equal(name, queryWire) ||
			binary.BigEndian.Uint16(msg[next:]) != typeA || binary.BigEndian.Uint16(msg[next+2:]) != classIN {
			return NoAnswer
		}
		off = next + 4
	default:
		return NoAnswer
	}
	ctrld := false
	for range binary.BigEndian.Uint16(msg[6:]) {
		name, next, ok := readName(msg, off)
		if !ok || next+10 > len(msg) {
			return NoAnswer
		}
		typ := binary.BigEndian.Uint16(msg[next:])
		class := binary.BigEndian.Uint16(msg[next+2:])
		rdlen := int(binary.BigEndian.Uint16(msg[next+8:]))
		rdata := next + 10
		if rdata+rdlen > len(msg) {
			return NoAnswer
		}
		if typ == typeA && class == classIN && rdlen == 4 && bytes.Equal(name, queryWire) &&
			bytes.Equal(msg[rdata:rdata+4], []byte{0, 0, 0, 0}) {
			ctrld = true
		}
		off = rdata + rdlen
	}
	if ctrld && msg[3]&0x0F == rcodeOK {
		return Ctrld
	}
	return Other
}

// readName reads the domain name at off in msg, following compression
// pointers, and returns it in wire form, uncompressed and lower case (DNS
// names compare without case), with the offset just past it where it
// starts. Each pointer must point before the one that led to it, so a
// malicious loop of pointers ends; a name is at most 255 octets
// (RFC 1035 3.1) and labels of the reserved types 01 and 10 are refused.
func readName(msg []byte, off int) (name []byte, next int, ok bool) {
	name = make([]byte, 0, 32)
	next = -1    // set at the first pointer
	limit := off // a pointer must point below this
	for {
		if off >= len(msg) {
			return nil, 0, false
		}
		l := int(msg[off])
		switch l & 0xC0 {
		case 0x00:
			if len(name)+1+l > 255 || off+1+l > len(msg) {
				return nil, 0, false
			}
			name = append(name, byte(l))
			if l == 0 {
				if next < 0 {
					next = off + 1
				}
				return name, next, true
			}
			for _, c := range msg[off+1 : off+1+l] {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				name = append(name, c)
			}
			off += 1 + l
		case 0xC0:
			if off+2 > len(msg) {
				return nil, 0, false
			}
			ptr := int(binary.BigEndian.Uint16(msg[off:]) & 0x3FFF)
			if ptr >= limit {
				return nil, 0, false
			}
			if next < 0 {
				next = off + 2
			}
			limit, off = ptr, ptr
		default:
			return nil, 0, false
		}
	}
}
