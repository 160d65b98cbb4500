//go:build unix

package runner

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/fakectrld"
)

// The job object on Windows depends on started running once the child
// exists, before its output, and with cmd.Process readable. These run the
// same os/exec code path on any platform; run them with -race to check the
// read of cmd.Process.
func TestStartNotifierRunsAfterStartBeforeOutput(t *testing.T) {
	fake := install(t, fakectrld.Action{Stdout: []string{"one", "two"}, Stderr: []string{"three"}})
	cmd := exec.Command(fake, "start")
	var mu sync.Mutex
	var events []string
	var out bytes.Buffer
	sink := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, "write")
		return out.Write(p)
	})
	calls, pid := 0, 0
	n := &startNotifier{w: sink, started: func() {
		mu.Lock()
		defer mu.Unlock()
		calls++
		pid = cmd.Process.Pid
		events = append(events, "started")
	}}
	cmd.Stdout, cmd.Stderr = n, n
	require.NoError(t, cmd.Run())
	assert.Equal(t, 1, calls)
	assert.Equal(t, cmd.Process.Pid, pid)
	require.NotEmpty(t, events)
	assert.Equal(t, "started", events[0])
	assert.Equal(t, "one\ntwo\nthree\n", out.String())
}

func TestStartNotifierRunsForASilentChild(t *testing.T) {
	fake := install(t, fakectrld.Action{Exit: 3})
	cmd := exec.CommandContext(context.Background(), fake, "start")
	called := make(chan int, 1)
	n := &startNotifier{w: &bytes.Buffer{}, started: func() { called <- cmd.Process.Pid }}
	cmd.Stdout, cmd.Stderr = n, n
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	select {
	case pid := <-called:
		assert.Equal(t, cmd.Process.Pid, pid)
	default:
		t.Fatal("started was not called for a child that printed nothing")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
