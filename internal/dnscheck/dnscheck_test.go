package dnscheck

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// serve answers every datagram on a UDP socket of 127.0.0.1 with what
// reply makes of it (nothing when it returns nil) until the test ends.
func serve(t *testing.T, reply func(q []byte) [][]byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			for _, r := range reply(append([]byte(nil), buf[:n]...)) {
				_, _ = pc.WriteTo(r, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// ptrQ is a compression pointer to the question's name, as most servers
// write an answer's owner.
var ptrQ = []byte{0xC0, 12}

// wire is a dotted name in uncompressed wire form.
func wire(name string) []byte {
	q := Query(0, name)
	return q[12 : len(q)-4]
}

// rr is a resource record: owner (wire form, maybe a pointer), type,
// class IN unless class says otherwise, TTL 0, rdata.
func rr(owner []byte, typ uint16, rdata []byte, class ...uint16) []byte {
	c := uint16(classIN)
	if len(class) > 0 {
		c = class[0]
	}
	r := append([]byte(nil), owner...)
	r = binary.BigEndian.AppendUint16(r, typ)
	r = binary.BigEndian.AppendUint16(r, c)
	r = append(r, 0, 0, 0, 0) // TTL
	r = binary.BigEndian.AppendUint16(r, uint16(len(rdata)))
	return append(r, rdata...)
}

// response is q answered with rcode and the records given.
func response(q []byte, rcode byte, records ...[]byte) []byte {
	end, ok := QuestionsEnd(q)
	if !ok {
		return nil
	}
	r := append([]byte(nil), q[:end]...)
	r[2] |= 0x80
	r[3] = 0x80 | rcode // RA
	binary.BigEndian.PutUint16(r[6:], uint16(len(records)))
	for _, rec := range records {
		r = append(r, rec...)
	}
	return r
}

// ctrldAnswer is what ctrld sends for q.
func ctrldAnswer(q []byte) []byte {
	return response(q, 0, rr(ptrQ, typeA, []byte{0, 0, 0, 0}))
}

func withID(r []byte, delta uint16) []byte {
	r = append([]byte(nil), r...)
	binary.BigEndian.PutUint16(r, binary.BigEndian.Uint16(r)+delta)
	return r
}

func TestAsk(t *testing.T) {
	wine.Skip(t, wine.NoUDP)
	closedPort := func(t *testing.T) string {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
		addr := pc.LocalAddr().String()
		pc.Close()
		return addr
	}
	answering := func(reply func(q []byte) [][]byte) func(*testing.T) string {
		return func(t *testing.T) string { return serve(t, reply) }
	}
	one := func(f func(q []byte) []byte) func(*testing.T) string {
		return answering(func(q []byte) [][]byte { return [][]byte{f(q)} })
	}
	const wait = 200 * time.Millisecond
	tests := []struct {
		name  string
		addr  func(*testing.T) string
		want  Answer
		quick bool // false when the only end is the context's deadline
	}{
		{"ctrld", one(ctrldAnswer), Ctrld, true},
		{"ctrld, owner uncompressed in upper case", one(func(q []byte) []byte {
			return response(q, 0, rr(wire("CTRLD.Test."), typeA, []byte{0, 0, 0, 0}))
		}), Ctrld, true},
		{"NXDOMAIN", one(func(q []byte) []byte { return response(q, 3) }), Other, true},
		{"SERVFAIL", one(func(q []byte) []byte { return response(q, 2) }), Other, true},
		{"REFUSED without the question", one(func(q []byte) []byte {
			r := response(q, 5)[:12]
			binary.BigEndian.PutUint16(r[4:], 0)
			return r
		}), Other, true},
		{"NOERROR, no records", one(func(q []byte) []byte { return response(q, 0) }), Other, true},
		{"another address", one(func(q []byte) []byte {
			return response(q, 0, rr(ptrQ, typeA, []byte{127, 0, 0, 1}))
		}), Other, true},
		{"a CNAME to a name with 0.0.0.0", one(func(q []byte) []byte {
			return response(q, 0,
				rr(ptrQ, 5, wire("sink.example.")),
				rr(wire("sink.example."), typeA, []byte{0, 0, 0, 0}))
		}), Other, true},
		{"silent", answering(func([]byte) [][]byte { return nil }), NoAnswer, false},
		{"garbage", answering(func([]byte) [][]byte { return [][]byte{[]byte("hello"), make([]byte, 40)} }), NoAnswer, false},
		{"wrong ID", one(func(q []byte) []byte { return withID(ctrldAnswer(q), 1) }), NoAnswer, false},
		{"wrong ID, junk, then the right one", answering(func(q []byte) [][]byte {
			good := ctrldAnswer(q)
			return [][]byte{withID(good, 1), []byte("junk"), good}
		}), Ctrld, true},
		{"another question", one(func(q []byte) []byte {
			return ctrldAnswer(Query(binary.BigEndian.Uint16(q), "controld.com."))
		}), NoAnswer, false},
		{"the query echoed, QR unset", one(func(q []byte) []byte { return q }), NoAnswer, false},
		{"truncated answer", one(func(q []byte) []byte { r := ctrldAnswer(q); return r[:len(r)-2] }), NoAnswer, false},
		{"closed port", closedPort, NoAnswer, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := tt.addr(t)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			start := time.Now()
			if got := Ask(ctx, addr); got != tt.want {
				t.Errorf("Ask(%s) = %v, want %v", addr, got, tt.want)
			}
			took := time.Since(start)
			if took >= 2*time.Second {
				t.Errorf("bounded by the context: took %v, want less than 2s", took)
			}
			if !tt.quick && took < wait-50*time.Millisecond {
				t.Errorf("read until the context ended: took %v, want at least %v", took, wait-50*time.Millisecond)
			}
		})
	}
}

func TestAskCancelledWithoutDeadline(t *testing.T) {
	wine.Skip(t, wine.NoUDP)
	t.Parallel()
	addr := serve(t, func([]byte) [][]byte { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if got := Ask(ctx, addr); got != NoAnswer {
		t.Errorf("Ask(%s) = %v from a silent server, want %v", addr, got, NoAnswer)
	}
	if took := time.Since(start); took >= 2*time.Second {
		t.Errorf("took %v after the cancel at 100ms, want less than 2s", took)
	}
}

func TestAskEndedContext(t *testing.T) {
	wine.Skip(t, wine.NoUDP)
	t.Parallel()
	addr := serve(t, func(q []byte) [][]byte { return [][]byte{ctrldAnswer(q)} })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := Ask(ctx, addr); got != NoAnswer {
		t.Errorf("Ask(%s) = %v with an ended context, want %v", addr, got, NoAnswer)
	}
	if got := Ask(context.Background(), "not an address"); got != NoAnswer {
		t.Errorf(`Ask("not an address") = %v, want %v`, got, NoAnswer)
	}
}

func TestQuery(t *testing.T) {
	q := Query(0xBEEF, "ctrld.test.")
	want := []byte{0xBE, 0xEF, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0,
		5, 'c', 't', 'r', 'l', 'd', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1}
	if !bytes.Equal(q, want) {
		t.Errorf("Query(0xBEEF, %q) = % x, want % x", "ctrld.test.", q, want)
	}
	if got := Query(0xBEEF, "ctrld.test"); !bytes.Equal(got, q) {
		t.Errorf("the final dot is optional: Query(0xBEEF, %q) = % x, want % x", "ctrld.test", got, q)
	}
	end, ok := QuestionsEnd(q)
	if !ok || end != len(q) {
		t.Errorf("QuestionsEnd(% x) = %d, %v, want %d, true", q, end, ok, len(q))
	}
}

func TestClassify(t *testing.T) {
	q := Query(7, QueryName)
	zero := []byte{0, 0, 0, 0}
	header := func(r []byte, qd, an uint16) []byte {
		r = append([]byte(nil), r...)
		binary.BigEndian.PutUint16(r[4:], qd)
		binary.BigEndian.PutUint16(r[6:], an)
		return r
	}
	// A name that ends with a pointer to the question's second label.
	partial := append([]byte{5, 'c', 't', 'r', 'l', 'd'}, 0xC0, 18)
	tests := []struct {
		name string
		msg  []byte
		want Answer
	}{
		{"ctrld", ctrldAnswer(q), Ctrld},
		{"ctrld, owner half compressed", response(q, 0, rr(partial, typeA, zero)), Ctrld},
		{"ctrld after another record", response(q, 0, rr(ptrQ, 16, []byte("\x03txt")), rr(ptrQ, typeA, zero)), Ctrld},
		{"0.0.0.0 with NXDOMAIN", response(q, 3, rr(ptrQ, typeA, zero)), Other},
		{"0.0.0.0 of class CH", response(q, 0, rr(ptrQ, typeA, zero, 3)), Other},
		{"AAAA ::", response(q, 0, rr(ptrQ, 28, make([]byte, 16))), Other},
		{"A with 5 bytes", response(q, 0, rr(ptrQ, typeA, make([]byte, 5))), Other},
		{"another owner", response(q, 0, rr(wire("ctrld.test.example."), typeA, zero)), Other},
		{"one label with a dot in it", response(q, 0, rr([]byte("\x0actrld.test\x00"), typeA, zero)), Other},
		{"no question", header(response(q, 3)[:12], 0, 0), Other},
		{"wrong ID", withID(ctrldAnswer(q), 1), NoAnswer},
		{"not a response", q, NoAnswer},
		{"short header", ctrldAnswer(q)[:11], NoAnswer},
		{"two questions", header(ctrldAnswer(q), 2, 1), NoAnswer},
		{"question type AAAA", func() []byte { r := ctrldAnswer(q); r[len(q)-3] = 28; return r }(), NoAnswer},
		{"more answers than held", header(ctrldAnswer(q), 1, 2), NoAnswer},
		{"rdlength past the end", func() []byte { r := ctrldAnswer(q); r[len(r)-5] = 5; return r }(), NoAnswer},
		{"pointer to itself", response(q, 0, rr([]byte{0xC0, byte(len(q))}, typeA, zero)), NoAnswer},
		{"pointer forward", response(q, 0, rr([]byte{0xC0, 0xFF}, typeA, zero)), NoAnswer},
		{"pointer cut short", append(header(response(q, 0), 1, 1), 0xC0), NoAnswer},
		{"reserved label type", response(q, 0, rr([]byte{0x80, 0}, typeA, zero)), NoAnswer},
		{"label past the end", append(header(response(q, 0), 1, 1), 9, 'a'), NoAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.msg, 7); got != tt.want {
				t.Errorf("classify(% x) = %v, want %v", tt.msg, got, tt.want)
			}
		})
	}
}

func TestReadNameLoop(t *testing.T) {
	// Two names pointing at each other, the loop a naive reader never
	// leaves: a label then a pointer back to the start.
	msg := make([]byte, 12)
	msg = append(msg, 1, 'a', 0xC0, 12)
	if _, _, ok := readName(msg, 12); ok {
		t.Errorf("readName(% x, 12): ok, want not ok", msg)
	}
	// 128 labels of one letter, 256 octets with the root: one too many.
	long := make([]byte, 12)
	for range 128 {
		long = append(long, 1, 'a')
	}
	long = append(long, 0)
	if _, _, ok := readName(long, 12); ok {
		t.Errorf("readName of a 257-octet name: ok, want not ok")
	}
	if _, next, ok := readName(long[:len(long)-3], 12); ok || next != 0 {
		t.Errorf("readName of a name cut short = %d, %v, want 0, false", next, ok)
	}
}

func FuzzClassify(f *testing.F) {
	q := Query(7, QueryName)
	f.Add(ctrldAnswer(q))
	f.Add(response(q, 3))
	f.Add(response(q, 0, rr([]byte{5, 'c', 't', 'r', 'l', 'd', 0xC0, 18}, typeA, []byte{0, 0, 0, 0})))
	f.Add(response(q, 0, rr([]byte{0xC0, byte(len(q))}, typeA, []byte{0, 0, 0, 0})))
	f.Fuzz(func(t *testing.T, msg []byte) {
		got := classify(msg, 7)
		if got != NoAnswer && (len(msg) < 12 || binary.BigEndian.Uint16(msg) != 7 || msg[2]&0x80 == 0) {
			t.Errorf("classify(% x) = %v for what is not a response with ID 7", msg, got)
		}
		if got == Ctrld && msg[3]&0x0F != 0 {
			t.Errorf("classify(% x) = %v with RCODE %d", msg, got, msg[3]&0x0F)
		}
		for off := range min(len(msg), 64) {
			name, next, ok := readName(msg, off)
			if ok && (len(name) > 255 || next <= off || next > len(msg)) {
				t.Errorf("readName(% x, %d) = % x, %d", msg, off, name, next)
			}
		}
	})
}
