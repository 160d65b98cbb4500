// Command floor is the floor of the bench's wrapper overhead: a Go program
// that runs the figure's three ctrld calls as ctrld-install runs them,
// through internal/runner (the parent-death signal and a group of their
// own, a watcher started ahead for ctrld start, the output read line by
// line), and does nothing else: no flags, no lock, no outcome record, no
// classification. With -plain it runs them with os/exec alone. What it
// costs over the bare calls is the part of the figure no work inside
// ctrld-install can remove: one more Go process, and the runner.
//
// Usage: floor [-plain] ctrld workdir token
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

func main() {
	plain := flag.Bool("plain", false, "run the calls with os/exec alone")
	flag.Parse()
	if flag.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: floor [-plain] ctrld workdir token")
		os.Exit(2)
	}
	ctrld, dir, token := flag.Arg(0), flag.Arg(1), flag.Arg(2)
	calls := []runner.Command{
		{Args: []string{"--version"}, Brief: true},
		{Args: []string{"start", "--cd-org", token}},
		{Args: []string{"status"}, Brief: true},
	}
	for _, c := range calls {
		c.Path, c.Dir, c.Env = ctrld, dir, os.Environ()
		c.Line = func([]byte) {}
		code := 0
		if *plain {
			cmd := exec.Command(ctrld, c.Args...)
			cmd.Dir = dir
			if err := cmd.Run(); err != nil {
				code = 1
			}
		} else {
			res, err := runner.Run(context.Background(), c)
			if err != nil || res.ExitCode != 0 {
				code = 1
			}
		}
		if code != 0 {
			fmt.Fprintf(os.Stderr, "floor: ctrld %s failed\n", c.Args[0])
			os.Exit(1)
		}
	}
}
