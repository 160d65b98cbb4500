package bench

import (
	"os"
	"testing"
)

// CTRLD_INSTALL_FLEET_DIR=dir writes the bench's 100,000-device fleet
// there, to run summarize on it by hand.
func TestWriteFleetByHand(t *testing.T) {
	dir := os.Getenv("CTRLD_INSTALL_FLEET_DIR")
	if dir == "" {
		t.Skip("CTRLD_INSTALL_FLEET_DIR is not set")
	}
	st, err := WriteFleet(dir, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", st)
}
