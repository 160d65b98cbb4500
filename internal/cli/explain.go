package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/explain"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
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
// for the usage. "-" alone reads the input from standard input, for a log
// piped in rather than pasted on a command line.
func defineExplain(_ *app, fs *pflag.FlagSet) action {
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.SetInterspersed(false)
	return func(a *app, c *call) int {
		args := c.args
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		input := strings.Join(args, " ")
		if len(args) == 1 && args[0] == "-" {
			var err error
			if input, err = readExplainInput(a.io.In); err != nil {
				return a.failUsage(c, err)
			}
		}
		ans, err := explain.Resolve(input)
		switch {
		case errors.Is(err, explain.ErrEmpty):
			return a.failUsage(c, Usagef("%s", err.Error()))
		case err != nil:
			// The input may be a pasted token: the sentence names only
			// registered codes, never what was typed.
			msg := err.Error() + "; ctrld-install codes lists every code"
			if near := explain.Nearest(input, 3); len(near) > 0 {
				names := make([]string, len(near))
				for i, c := range near {
					names[i] = fmt.Sprintf("%s (exit %d)", c.Name, c.Exit)
				}
				msg = err.Error() + "; nearest known codes: " + strings.Join(names, ", ")
			}
			return a.failUsage(c, Usagef("%s", msg))
		}
		if err := explain.WriteAnswer(a.io.Out, ans); err != nil {
			return a.failWrite(c)
		}
		return 0
	}
}

// maxExplainInput bounds what explain reads from standard input: the last
// lines of a log are what it needs, and a whole log piped in by mistake
// must not be held.
const maxExplainInput = 1 << 20

// readExplainInput reads standard input the way summarize reads a file
// (parse.NewTextReader: UTF-16 from PowerShell 5.1 included). Its errors
// name no input.
func readExplainInput(in io.Reader) (string, error) {
	if in == nil {
		return "", nil
	}
	b, err := io.ReadAll(io.LimitReader(parse.NewTextReader(bufio.NewReader(in)), maxExplainInput+1))
	switch {
	case err != nil:
		return "", Usagef("standard input cannot be read")
	case len(b) > maxExplainInput:
		return "", Usagef("standard input holds more than 1 MiB; give explain the last lines of the log (tail -n 50)")
	}
	return string(b), nil
}
