// Package dnscheck asks a DNS listener one question to learn whether a
// resolver is alive on it: ctrld's own start and restart can report
// success while the daemon behind them is dead (see the 1.5.0 captures of
// a bad resolver, an unavailable listen address and a dying build), so the
// only evidence that the device resolves is an answer on the listener.
//
// It is not a resolver: it writes the few bytes of one query by hand and
// reads no further than the header and the question section.
package dnscheck

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"time"
)

// QueryName is the name asked for. Any name does: the answer's content is
// not looked at, only that a resolver answered.
const QueryName = "controld.com."

// Answers sends one query (type A for QueryName, recursion desired) over
// UDP to addr ("ip:port") and reports whether a well-formed DNS response
// to it arrives before ctx ends. Any RCODE counts: NXDOMAIN, SERVFAIL and
// REFUSED come from a live resolver too. A datagram that is not a response
// to this query (another ID, too short, not a response) is ignored and the
// read goes on; an error (a closed port's ICMP refusal, for one) ends the
// check with false at once, so a caller that polls should ask again.
func Answers(ctx context.Context, addr string) bool {
	if ctx.Err() != nil {
		return false
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return false
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
		return false
	}
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return false
		}
		if IsResponse(buf[:n], id) {
			return ctx.Err() == nil
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

// IsResponse reports whether msg is a well-formed DNS response with the
// given id: a full header, the QR bit set, and QDCOUNT questions that
// parse within the message.
func IsResponse(msg []byte, id uint16) bool {
	if len(msg) < 12 || binary.BigEndian.Uint16(msg) != id || msg[2]&0x80 == 0 {
		return false
	}
	_, ok := QuestionsEnd(msg)
	return ok
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
		var ok bool
		if off, ok = skipName(msg, off); !ok || off+4 > len(msg) {
			return 0, false
		}
		off += 4 // type and class
	}
	return off, true
}

// skipName returns the offset past the domain name at off: labels ending
// in the root, or in a compression pointer (two bytes, not followed).
func skipName(msg []byte, off int) (int, bool) {
	for total := 0; off < len(msg); {
		l := int(msg[off])
		switch {
		case l == 0:
			return off + 1, true
		case l&0xC0 == 0xC0:
			if off+2 > len(msg) {
				return 0, false
			}
			return off + 2, true
		case l&0xC0 != 0:
			return 0, false // the reserved label types
		}
		total += l + 1
		if total > 255 {
			return 0, false
		}
		off += 1 + l
	}
	return 0, false
}
