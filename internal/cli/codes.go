package cli

import (
	"os"
	"slices"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/explain"
)

func pid() int { return os.Getpid() }

// defineCodes prints the whole code registry.
func defineCodes(_ *app, fs *pflag.FlagSet) action {
	format := fs.String("format", "text", "")
	return func(a *app, c *call) int {
		if !slices.Contains(explain.CodesFormats, *format) {
			return a.failUsage(c, Usagef("--format must be text, json or markdown"))
		}
		if err := explain.WriteCodes(a.io.Out, *format); err != nil {
			return a.failWrite(c)
		}
		return 0
	}
}
