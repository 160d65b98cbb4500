package dnscheck

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// serve answers every datagram on a UDP socket of 127.0.0.1 with what
// reply makes of it (nothing when it returns nil) until the test ends.
func serve(t *testing.T, reply func(q []byte) [][]byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
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
		require.NoError(t, err)
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
			assert.Equal(t, tt.want, Answers(ctx, addr))
			took := time.Since(start)
			assert.Less(t, took, 2*time.Second, "bounded by the context")
			if !tt.quick {
				assert.GreaterOrEqual(t, took, 250*time.Millisecond, "read until the context ended")
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
	assert.False(t, Answers(ctx, addr))
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestAnswersEndedContext(t *testing.T) {
	wine.Skip(t, wine.NoUDP)
	addr := serve(t, func(q []byte) [][]byte { return [][]byte{response(q, 0)} })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, Answers(ctx, addr))
	assert.False(t, Answers(context.Background(), "not an address"))
}

func TestQuery(t *testing.T) {
	q := Query(0xBEEF, "controld.com.")
	assert.Equal(t, []byte{0xBE, 0xEF, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0,
		8, 'c', 'o', 'n', 't', 'r', 'o', 'l', 'd', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1}, q)
	assert.Equal(t, q, Query(0xBEEF, "controld.com"), "the final dot is optional")
	end, ok := QuestionsEnd(q)
	assert.True(t, ok)
	assert.Equal(t, len(q), end)
}

func TestIsResponse(t *testing.T) {
	r := response(Query(7, QueryName), 0)
	assert.True(t, IsResponse(r, 7))
	assert.False(t, IsResponse(r, 8))
	assert.False(t, IsResponse(r[:11], 7))
	// A compression pointer ends a name.
	ptr := append(append([]byte(nil), r[:12]...), 0xC0, 12, 0, 1, 0, 1)
	assert.True(t, IsResponse(ptr, 7))
	// No questions at all parse.
	none := append([]byte(nil), r[:12]...)
	binary.BigEndian.PutUint16(none[4:], 0)
	assert.True(t, IsResponse(none, 7))
	// More questions than the message holds do not.
	binary.BigEndian.PutUint16(r[4:], 2)
	assert.False(t, IsResponse(r, 7))
	// Reserved label types do not.
	bad := append(append([]byte(nil), r[:12]...), 0x80, 0, 0, 1, 0, 1)
	binary.BigEndian.PutUint16(bad[4:], 1)
	assert.False(t, IsResponse(bad, 7))
}
