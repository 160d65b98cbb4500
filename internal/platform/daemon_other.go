//go:build !darwin && !linux && !windows

package platform

import (
	"context"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

func servicePIDs(context.Context) []int { return nil }

// processRuns cannot tell on this system.
func processRuns(int, string) parse.Same { return parse.SameUnknown }

func processExecutable(int) string { return "" }
