package realsuite

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
)

// DNS record types the suite asks and answers.
const (
	typeA    = 1
	typeAAAA = 28
)

// question is the one question of a DNS message.
type question struct {
	id    uint16
	flags uint16
	name  string // lower case, with the trailing dot
	qtype uint16
	end   int // offset just past the question
}

var errMalformed = errors.New("malformed DNS message")

// parseQuestion reads the header and the first question: all a fake
// resolver needs, and all a client needs to match an answer. Names in
// questions are never compressed.
func parseQuestion(msg []byte) (question, error) {
	var q question
	if len(msg) < 12 || binary.BigEndian.Uint16(msg[4:]) < 1 {
		return q, errMalformed
	}
	q.id = binary.BigEndian.Uint16(msg)
	q.flags = binary.BigEndian.Uint16(msg[2:])
	var b strings.Builder
	i := 12
	for {
		if i >= len(msg) {
			return q, errMalformed
		}
		n := int(msg[i])
		i++
		if n == 0 {
			break
		}
		if n > 63 || i+n > len(msg) {
			return q, errMalformed
		}
		b.WriteString(strings.ToLower(string(msg[i : i+n])))
		b.WriteByte('.')
		i += n
	}
	if i+4 > len(msg) {
		return q, errMalformed
	}
	q.name = b.String()
	if q.name == "" {
		q.name = "."
	}
	q.qtype = binary.BigEndian.Uint16(msg[i:])
	q.end = i + 4
	return q, nil
}

// newQuery builds a recursive query for name (with its trailing dot).
func newQuery(id uint16, name string, qtype uint16) []byte {
	msg := binary.BigEndian.AppendUint16(nil, id)
	msg = append(msg, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0) // RD, one question
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		msg = append(msg, byte(len(label)))
		msg = append(msg, label...)
	}
	msg = append(msg, 0)
	msg = binary.BigEndian.AppendUint16(msg, qtype)
	return binary.BigEndian.AppendUint16(msg, 1)
}

// answer replies to the question in query with addr when its family fits
// the question's type, else with no record (NOERROR, NODATA).
func answer(query []byte, q question, addr netip.Addr) []byte {
	var rdata []byte
	switch {
	case q.qtype == typeA && addr.Is4():
		a := addr.As4()
		rdata = a[:]
	case q.qtype == typeAAAA && addr.Is6():
		a := addr.As16()
		rdata = a[:]
	}
	resp := binary.BigEndian.AppendUint16(nil, q.id)
	// QR, the query's opcode and RD, RA; NOERROR.
	resp = binary.BigEndian.AppendUint16(resp, 0x8000|q.flags&0x7900|0x0080)
	ancount := 0
	if rdata != nil {
		ancount = 1
	}
	resp = append(resp, 0, 1, 0, byte(ancount), 0, 0, 0, 0)
	resp = append(resp, query[12:q.end]...)
	if rdata != nil {
		resp = append(resp, 0xc0, 12) // the question's name
		resp = binary.BigEndian.AppendUint16(resp, q.qtype)
		resp = append(resp, 0, 1, 0, 0, 0, 60)
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rdata)))
		resp = append(resp, rdata...)
	}
	return resp
}

// reply is what a client learns from an answer.
type reply struct {
	rcode int
	addrs []netip.Addr
}

// parseReply reads the rcode and the A/AAAA records of an answer to the
// query with this id.
func parseReply(msg []byte, id uint16) (reply, error) {
	var r reply
	q, err := parseQuestion(msg)
	if err != nil {
		return r, err
	}
	if q.id != id || q.flags&0x8000 == 0 {
		return r, errors.New("not the answer to this query")
	}
	r.rcode = int(q.flags & 0xf)
	ancount := int(binary.BigEndian.Uint16(msg[6:]))
	i := q.end
	for range ancount {
		// The owner name: labels, possibly ending in a pointer.
		for {
			if i >= len(msg) {
				return r, errMalformed
			}
			n := int(msg[i])
			if n&0xc0 == 0xc0 {
				i += 2
				break
			}
			i += 1 + n
			if n == 0 {
				break
			}
		}
		if i+10 > len(msg) {
			return r, errMalformed
		}
		typ := binary.BigEndian.Uint16(msg[i:])
		rdlen := int(binary.BigEndian.Uint16(msg[i+8:]))
		i += 10
		if i+rdlen > len(msg) {
			return r, errMalformed
		}
		if addr, ok := netip.AddrFromSlice(msg[i : i+rdlen]); ok && (typ == typeA || typ == typeAAAA) {
			r.addrs = append(r.addrs, addr)
		}
		i += rdlen
	}
	return r, nil
}
