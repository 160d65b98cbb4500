//go:build windows

package extra

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
)

func pgid() int { return 0 }

// serviceName is ctrld's service on Windows.
const serviceName = "ctrld"

// serviceWait bounds how long the stand-in waits for the service to reach
// a state, as ctrld's service library does.
const serviceWait = 20 * time.Second

// service does to the service control manager what ctrld does: install
// registers the service ctrld, its binary this stand-in with "run" (an
// automatic start, as ctrld registers it), and starts it; running fails
// unless it runs; remove stops and deletes it.
func service(exe, what string) error {
	m, err := mgr.Connect()
	if err != nil {
		return err
	}
	defer m.Disconnect()
	switch what {
	case "install":
		s, err := m.OpenService(serviceName)
		if err != nil {
			s, err = m.CreateService(serviceName, exe, mgr.Config{
				StartType:   mgr.StartAutomatic,
				DisplayName: "Control D stand-in",
			}, "run")
			if err != nil {
				return err
			}
		}
		defer s.Close()
		if err := s.Start(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
			return err
		}
		return waitState(s, svc.Running)
	case "running":
		s, err := m.OpenService(serviceName)
		if err != nil {
			return err
		}
		defer s.Close()
		st, err := s.Query()
		if err != nil {
			return err
		}
		if st.State != svc.Running {
			return fmt.Errorf("the service is in state %d", st.State)
		}
		return nil
	case "remove":
		s, err := m.OpenService(serviceName)
		if err != nil {
			return err
		}
		defer s.Close()
		if st, err := s.Control(svc.Stop); err == nil && st.State != svc.Stopped {
			if err := waitState(s, svc.Stopped); err != nil {
				return err
			}
		}
		return s.Delete()
	}
	return fmt.Errorf("unknown service action %q", what)
}

func waitState(s *mgr.Service, want svc.State) error {
	deadline := time.Now().Add(serviceWait)
	for {
		st, err := s.Query()
		if err != nil {
			return err
		}
		if st.State == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the service is in state %d after %v, want %d", st.State, serviceWait, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scmDaemon is ctrld run as the service control manager starts it: it
// reports running and waits to be stopped.
func scmDaemon() int {
	if err := svc.Run(serviceName, scmHandler{}); err != nil {
		fmt.Fprintln(os.Stderr, "stand-in ctrld: run:", err)
		return 1
	}
	return 0
}

type scmHandler struct{}

func (scmHandler) Execute(_ []string, req <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	status <- svc.Status{State: svc.StartPending}
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for r := range req {
		switch r.Cmd {
		case svc.Interrogate:
			status <- r.CurrentStatus
		case svc.Stop, svc.Shutdown:
			status <- svc.Status{State: svc.StopPending}
			return false, 0
		}
	}
	return false, 0
}
