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

// response is q answered with rcode and no records.
func response(q []byte, rcode byte) []byte {
	end, ok := QuestionsEnd(q)
	if !ok {
		return nil
	}
	r := append([]byte(nil), q[:end]...)
	r[2] |= 0x80
	r[3] = 0x80 | rcode // RA
	return r
}

func TestAnswers(t *testing.T) {
	wine.Skip(t, wine.NoUDP)
	closedPort := func() string {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
		addr := pc.LocalAddr().String()
		pc.Close()
		return addr
	}
	tests := []struct {
		name  string
		addr  func() string
		want  bool
		quick bool // false when the only end is the context's deadline
	}{
		{"answers NOERROR", func() string {
			return serve(t, func(q []byte) [][]byte { return [][]byte{response(q, 0)} })
		}, true, true},
		{"NXDOMAIN is an answer", func() string {
			return serve(t, func(q []byte) [][]byte { return [][]byte{response(q, 3)} })
		}, true, true},
		{"SERVFAIL is an answer", func() string {
			return serve(t, func(q []byte) [][]byte { return [][]byte{response(q, 2)} })
		}, true, true},
		{"silent", func() string {
			return serve(t, func([]byte) [][]byte { return nil })
		}, false, false},
		{"garbage", func() string {
			return serve(t, func([]byte) [][]byte { return [][]byte{[]byte("hello"), make([]byte, 40)} })
		}, false, false},
		{"wrong ID", func() string {
			return serve(t, func(q []byte) [][]byte {
				r := response(q, 0)
				binary.BigEndian.PutUint16(r, binary.BigEndian.Uint16(r)+1)
				return [][]byte{r}
			})
		}, false, false},
		{"wrong ID then the right one", func() string {
			return serve(t, func(q []byte) [][]byte {
				good := response(q, 0)
				bad := append([]byte(nil), good...)
				binary.BigEndian.PutUint16(bad, binary.BigEndian.Uint16(bad)+1)
				return [][]byte{bad, []byte("junk"), good}
			})
		}, true, true},
		{"the query echoed, QR unset", func() string {
			return serve(t, func(q []byte) [][]byte { return [][]byte{q} })
		}, false, false},
		{"truncated question", func() string {
			return serve(t, func(q []byte) [][]byte { r := response(q, 0); return [][]byte{r[:len(r)-3]} })
		}, false, false},
		{"closed port", closedPort, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := tt.addr()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			if got := Answers(ctx, addr); got != tt.want {
				t.Errorf("Answers(%s) = %v, want %v", addr, got, tt.want)
			}
			took := time.Since(start)
			if took >= 2*time.Second {
				t.Errorf("bounded by the context: took %v, want less than 2s", took)
			}
			if !tt.quick && took < 250*time.Millisecond {
				t.Errorf("read until the context ended: took %v, want at least 250ms", took)
			}
		})
	}
}

func TestAnswersCancelledWithoutDeadline(t *testing.T) {
	wine.Skip(t, wine.NoUDP)
	addr := serve(t, func([]byte) [][]byte { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if Answers(ctx, addr) {
		t.Errorf("Answers(%s) = true from a silent server, want false", addr)
	}
	if took := time.Since(start); took >= 2*time.Second {
		t.Errorf("took %v after the cancel at 100ms, want less than 2s", took)
	}
}

func TestAnswersEndedContext(t *testing.T) {
	wine.Skip(t, wine.NoUDP)
	addr := serve(t, func(q []byte) [][]byte { return [][]byte{response(q, 0)} })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Answers(ctx, addr) {
		t.Errorf("Answers(%s) = true with an ended context, want false", addr)
	}
	if Answers(context.Background(), "not an address") {
		t.Errorf(`Answers("not an address") = true, want false`)
	}
}

func TestQuery(t *testing.T) {
	q := Query(0xBEEF, "controld.com.")
	want := []byte{0xBE, 0xEF, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0,
		8, 'c', 'o', 'n', 't', 'r', 'o', 'l', 'd', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1}
	if !bytes.Equal(q, want) {
		t.Errorf("Query(0xBEEF, %q) = % x, want % x", "controld.com.", q, want)
	}
	if got := Query(0xBEEF, "controld.com"); !bytes.Equal(got, q) {
		t.Errorf("the final dot is optional: Query(0xBEEF, %q) = % x, want % x", "controld.com", got, q)
	}
	end, ok := QuestionsEnd(q)
	if !ok {
		t.Errorf("QuestionsEnd(% x): not ok, want ok", q)
	}
	if end != len(q) {
		t.Errorf("QuestionsEnd(% x) = %d, want %d", q, end, len(q))
	}
}

func TestIsResponse(t *testing.T) {
	r := response(Query(7, QueryName), 0)
	if !IsResponse(r, 7) {
		t.Errorf("IsResponse(% x, 7) = false, want true", r)
	}
	if IsResponse(r, 8) {
		t.Errorf("IsResponse(% x, 8) = true for ID 7, want false", r)
	}
	if IsResponse(r[:11], 7) {
		t.Errorf("IsResponse(% x, 7) = true for a short header, want false", r[:11])
	}
	// A compression pointer ends a name.
	ptr := append(append([]byte(nil), r[:12]...), 0xC0, 12, 0, 1, 0, 1)
	if !IsResponse(ptr, 7) {
		t.Errorf("IsResponse(% x, 7) = false, want true", ptr)
	}
	// No questions at all parse.
	none := append([]byte(nil), r[:12]...)
	binary.BigEndian.PutUint16(none[4:], 0)
	if !IsResponse(none, 7) {
		t.Errorf("IsResponse(% x, 7) = false, want true", none)
	}
	// More questions than the message holds do not.
	binary.BigEndian.PutUint16(r[4:], 2)
	if IsResponse(r, 7) {
		t.Errorf("IsResponse(% x, 7) = true, want false", r)
	}
	// Reserved label types do not.
	bad := append(append([]byte(nil), r[:12]...), 0x80, 0, 0, 1, 0, 1)
	binary.BigEndian.PutUint16(bad[4:], 1)
	if IsResponse(bad, 7) {
		t.Errorf("IsResponse(% x, 7) = true, want false", bad)
	}
}
