package standin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// firstDiff says where got and want part, so that a message about a
// 16 kB file need not print both.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("got %d bytes, want %d; from byte %d got %q, want %q",
		len(got), len(want), i, got[i:min(len(got), i+40)], want[i:min(len(want), i+40)])
}

func TestBuilds(t *testing.T) {
	dir := wine.TempDir(t)
	master := filepath.Join(dir, "master")
	body := bytes.Repeat([]byte("\x7fELF not really\n"), 1000)
	if err := os.WriteFile(master, body, 0o755); err != nil {
		t.Fatal(err)
	}
	s := Script{Version: "v1.5.0", Builds: map[string]Build{"dying": {Version: "v1.6.0", RunExit: 2}}}

	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := LinkBuild(bin, master, s, "kept")
	if err != nil {
		t.Fatalf("LinkBuild: %v", err)
	}
	if got := BuildLabel(exe); got != "kept" {
		t.Errorf("BuildLabel = %q, want %q", got, "kept")
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]byte(nil), body...), "\nCTRLD-STANDIN-BUILD:kept\n"...); !bytes.Equal(b, want) {
		t.Errorf("the master's bytes, then the trailer: %s", firstDiff(b, want))
	}
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode()&0o100 == 0 {
		t.Errorf("executable: mode %v, want the owner's execute bit", fi.Mode())
	}
	if got := BuildLabel(master); got != "" {
		t.Errorf("the master is untouched: a copy, not a link: its label is %q, want none", got)
	}
	sidecar, err := os.ReadFile(SidecarPath(exe))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"builds":{"dying":{"version":"v1.6.0","run_exit":2}}`; !bytes.Contains(sidecar, []byte(want)) {
		t.Errorf("sidecar %s does not contain %s", sidecar, want)
	}

	// A rename over the path: the new build's label, the same sidecar,
	// no temporary file left.
	if err := ReplaceBuild(exe, master, "dying"); err != nil {
		t.Fatalf("ReplaceBuild: %v", err)
	}
	if got := BuildLabel(exe); got != "dying" {
		t.Errorf("BuildLabel = %q, want %q", got, "dying")
	}
	after, err := os.ReadFile(SidecarPath(exe))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, sidecar) {
		t.Errorf("sidecar after the rename %s, want %s", after, sidecar)
	}
	entries, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("ctrld and its sidecar only: got %q", names)
	}

	for _, bad := range []string{"", "two\nlines", string(bytes.Repeat([]byte("x"), maxLabel+1))} {
		if err := ReplaceBuild(exe, master, bad); err == nil {
			t.Errorf("%q: ReplaceBuild succeeded, want an error", bad)
		}
	}
	if got := BuildLabel(exe); got != "dying" {
		t.Errorf("a refused label leaves the build: BuildLabel = %q, want %q", got, "dying")
	}

	// Files without a trailer, or too short to hold one, have no label.
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := BuildLabel(short); got != "" {
		t.Errorf("BuildLabel of %q = %q, want none", "x\n", got)
	}
	if got := BuildLabel(filepath.Join(dir, "absent")); got != "" {
		t.Errorf("BuildLabel of a missing file = %q, want none", got)
	}
	only := filepath.Join(dir, "only")
	if err := os.WriteFile(only, []byte(BuildTrailer+"x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := BuildLabel(only); got != "x" {
		t.Errorf("BuildLabel of %q = %q, want %q", BuildTrailer+"x\n", got, "x")
	}
}
