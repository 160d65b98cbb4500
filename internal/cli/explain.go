package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// runExplain prints the scenario, next step and evidence for what the
// arguments name. Several arguments are one input, so a line pasted without
// quotes still reads as one line.
func runExplain(args []string, io stdio) int {
	fs := newFlagSet("ctrld-install explain")
	p := report.New(io.Out, io.Err, nil, false)
	if code, done := parseFlags(fs, args, p, io, ""); done {
		return code
	}
	input := strings.Join(fs.Args(), " ")
	a, err := support.Resolve(input)
	switch {
	case errors.Is(err, support.ErrEmpty):
		return failUsage(p, nil, usagef("%s", err.Error()))
	case err != nil:
		// The input may be a pasted token: the sentence names only
		// registered codes, never what was typed.
		msg := err.Error() + "; ctrld-install codes lists every code"
		if near := support.Nearest(input, 3); len(near) > 0 {
			names := make([]string, len(near))
			for i, c := range near {
				names[i] = fmt.Sprintf("%s (exit %d)", c.Name, c.Exit)
			}
			msg = err.Error() + "; nearest known codes: " + strings.Join(names, ", ")
		}
		return failUsage(p, nil, usagef("%s", msg))
	}
	if err := support.WriteAnswer(io.Out, a); err != nil {
		return failWrite(p)
	}
	return 0
}
