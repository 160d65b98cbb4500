package platform

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows/svc/mgr"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// onlyInAThrowawayPrefix skips a test that registers a service named ctrld:
// on a real machine that would replace or remove a real ctrld's service.
// CI's Wine prefix is made for the run and thrown away.
func onlyInAThrowawayPrefix(t *testing.T) {
	t.Helper()
	if !wine.Detected() {
		t.Skip("registers a service named ctrld: run only under Wine, in a prefix made for the test run")
	}
}

func TestDefaultsOnWindows(t *testing.T) {
	d := defaults()
	if d.Home != `C:\ControlD` || d.Ctrld != `C:\ControlD\ctrld.exe` || d.ServiceFile != "" || len(d.ServiceLogs) != 0 {
		t.Errorf("defaults() = %+v, want home C:\\ControlD, ctrld C:\\ControlD\\ctrld.exe, no service file and no log", d)
	}
}

// Without --service-file the service control manager is asked: the
// service ctrld exists from its creation to its deletion, running or not.
func TestServiceRegisteredAsksTheSCM(t *testing.T) {
	onlyInAThrowawayPrefix(t)
	m, err := mgr.Connect()
	if err != nil {
		t.Fatalf("connecting to the service control manager: %v", err)
	}
	defer m.Disconnect()
	if s, err := m.OpenService("ctrld"); err == nil {
		s.Close()
		t.Fatal("a service named ctrld exists before the test")
	}
	if ServiceRegistered("") {
		t.Fatal("ServiceRegistered(\"\") = true with no service ctrld")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.CreateService("ctrld", exe, mgr.Config{StartType: mgr.StartManual, DisplayName: "ctrld-install test"}, "run")
	if err != nil {
		t.Fatalf("CreateService: %v", err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			s.Delete()
		}
		s.Close()
	})
	if !ServiceRegistered("") {
		t.Error("ServiceRegistered(\"\") = false with the service ctrld created")
	}
	if err := s.Delete(); err != nil {
		t.Fatalf("DeleteService: %v", err)
	}
	deleted = true
	s.Close()
	// Deletion is marked and done once the last handle closes.
	deadline := time.Now().Add(5 * time.Second)
	for ServiceRegistered("") {
		if time.Now().After(deadline) {
			t.Fatal("ServiceRegistered(\"\") = true 5s after the service was deleted")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With --service-file the file decides, whatever the SCM says.
func TestServiceRegisteredWithAServiceFile(t *testing.T) {
	dir := wine.TempDir(t)
	f := filepath.Join(dir, "ctrld.service")
	if ServiceRegistered(f) {
		t.Error("ServiceRegistered(a missing file) = true")
	}
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !ServiceRegistered(f) {
		t.Error("ServiceRegistered(a file) = false")
	}
	if ServiceRegistered(dir) {
		t.Error("ServiceRegistered(a directory) = true")
	}
}
