//go:build windows

package record

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// A run writes the record while status reads it. Status's handle shares
// delete, and the write replaces the file under it: the new record is in
// place, the handle still reads the old one whole, and nothing is left
// beside the record once the handle is closed.
func TestWriteWhileStatusHoldsTheRecord(t *testing.T) {
	dir := wine.TempDir(t)
	p := filepath.Join(dir, FileName)
	now := time.Now()
	if err := Write(p, New(summary(codes.OK), now)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	// As Read opens it, for status and the journal.
	held, _, err := safefile.Open(p, safefile.Rules{Owner: safefile.Self(), Private: true})
	if err != nil {
		t.Fatalf("opening the record as Read does: %v", err)
	}
	defer held.Close()
	if err := WriteUnsynced(p, Running(CommandInstall, PhaseStarted, os.Getpid(), "0.2.0", nil, "", now)); err != nil {
		t.Fatalf("WriteUnsynced while the record is held open: %v", err)
	}
	if err := Write(p, New(summary(codes.APIRejected), now)); err != nil {
		t.Fatalf("Write while the record is held open: %v", err)
	}
	r, err := Read(p)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got, want := r.Code, codes.APIRejected; got != want {
		t.Errorf("Read after the writes: Code = %q, want %q", got, want)
	}
	b, err := io.ReadAll(held)
	if err != nil {
		t.Fatalf("reading the held handle: %v", err)
	}
	var old Record
	if err := json.Unmarshal(b, &old); err != nil || old.Code != codes.OK {
		t.Errorf("the held handle reads %q (%v), want the record it opened, code %s", b, err, codes.OK)
	}
	held.Close()
	assertNoTemp(t, dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left in the home: %q, want only %s", names, FileName)
	}
}

// A reader that denies delete, as os.Open does, stops a write; the old
// record stays whole. This is why every reader of the record shares delete.
func TestWriteWhileAReaderDeniesDelete(t *testing.T) {
	dir := wine.TempDir(t)
	p := filepath.Join(dir, FileName)
	now := time.Now()
	if err := Write(p, New(summary(codes.OK), now)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	err = Write(p, New(summary(codes.APIRejected), now))
	f.Close()
	if err == nil {
		t.Fatalf("Write while os.Open holds the record succeeded; want a sharing failure")
	}
	r, err := Read(p)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got, want := r.Code, codes.OK; got != want {
		t.Errorf("Read after the refused write: Code = %q, want %q", got, want)
	}
	assertNoTemp(t, dir)
}

// A directory in the record's place is not a record.
func TestReadRefusesADirectory(t *testing.T) {
	dir := wine.TempDir(t)
	p := filepath.Join(dir, FileName)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); err != ErrInvalid {
		t.Errorf("Read(a directory) = %v, want %v", err, ErrInvalid)
	}
}
