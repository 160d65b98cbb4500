// Package fails is wine-tests.sh's fixture of a package whose test fails.
package fails

import "testing"

func TestFails(t *testing.T) { t.Fatal("the failure wine-tests.sh must report") }
