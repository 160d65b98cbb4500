package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// defineExplain prints the scenario, next step and evidence for what the
// arguments name. Several arguments are one input, so a line pasted without
// quotes still reads as one line.
//
// The arguments are data, never flags: Intune's statuses are negative
// decimals (-2016345060), FileWave's too (-1001), and a pasted line may
// hold anything. explain has no flags of its own, so the flag set is told
// to pass what looks like one over (pflag would read -2016345060 as the
// shorthands -2 -0 -1 …) and the input is taken from the arguments as
// given, a leading "--" dropped; only -h and --help, alone, still ask
// for the usage.
func defineExplain(_ *app, fs *pflag.FlagSet) action {
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.SetInterspersed(false)
	return func(a *app, c *call) int {
		args := c.args
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		input := strings.Join(args, " ")
		ans, err := support.Resolve(input)
		switch {
		case errors.Is(err, support.ErrEmpty):
			return a.failUsage(c, install.Usagef("%s", err.Error()))
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
			return a.failUsage(c, install.Usagef("%s", msg))
		}
		if err := support.WriteAnswer(a.io.Out, ans); err != nil {
			return a.failWrite(c)
		}
		return 0
	}
}
