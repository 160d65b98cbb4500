// Command fakectrld is the stand-in ctrld the benchmarks run, installed as
// `ctrld`. It reads what to do from the sidecar file <executable>.bench.json
// and does only that, so that its own cost is the same whether ctrld-install
// or the benchmark harness runs it.
//
// It is separate from internal/fakectrld, which the tests run as a copy of
// the test binary: a test binary carries the whole test package, and its
// start-up time would be part of every figure measured against it.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// Script is the sidecar's content. bench.FakeScript must stay in step with it.
type Script struct {
	Version string `json:"version"`
	Start   Action `json:"start"`
	Status  Action `json:"status"`
}

// Action is what one ctrld command does, in field order.
type Action struct {
	ServiceFile string   `json:"service_file,omitempty"` // create it, as ctrld start registers the service
	NeedService string   `json:"need_service,omitempty"` // exit 1 unless this file exists, as ctrld status does
	Stdout      []string `json:"stdout,omitempty"`       // lines to print
	CatFile     string   `json:"cat_file,omitempty"`     // copy this file to stdout
	FloodBytes  int64    `json:"flood_bytes,omitempty"`  // print this many bytes of log lines
	IgnoreTerm  bool     `json:"ignore_term,omitempty"`
	Hang        bool     `json:"hang,omitempty"`       // sleep for an hour
	StampFile   string   `json:"stamp_file,omitempty"` // write the wall clock in Unix nanoseconds here, last thing before exiting
	Exit        int      `json:"exit"`
}

func main() { os.Exit(run()) }

func run() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakectrld:", err)
		return 99
	}
	b, err := os.ReadFile(exe + ".bench.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakectrld: no script:", err)
		return 99
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		fmt.Fprintln(os.Stderr, "fakectrld: bad script:", err)
		return 99
	}
	switch {
	case len(os.Args) == 2 && os.Args[1] == "--version":
		fmt.Printf("ctrld version %s\n", s.Version)
		return 0
	case len(os.Args) >= 2 && os.Args[1] == "start":
		return s.Start.run()
	case len(os.Args) >= 2 && os.Args[1] == "status":
		return s.Status.run()
	}
	fmt.Fprintln(os.Stderr, "Error: unknown command for fakectrld")
	return 1
}

func (a Action) run() int {
	if a.IgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if a.ServiceFile != "" {
		if err := os.WriteFile(a.ServiceFile, []byte("[Unit]\n"), 0o644); err != nil {
			return 98
		}
	}
	if a.NeedService != "" {
		if _, err := os.Stat(a.NeedService); err != nil {
			return 1
		}
	}
	for _, l := range a.Stdout {
		fmt.Println(l)
	}
	if a.CatFile != "" {
		f, err := os.Open(a.CatFile)
		if err != nil {
			return 98
		}
		_, err = io.Copy(os.Stdout, f)
		f.Close()
		if err != nil {
			return 98
		}
	}
	if a.FloodBytes > 0 {
		flood(a.FloodBytes)
	}
	if a.Hang {
		time.Sleep(time.Hour)
	}
	if a.StampFile != "" {
		stamp := strconv.AppendInt(nil, time.Now().UnixNano(), 10)
		if err := os.WriteFile(a.StampFile, stamp, 0o644); err != nil {
			return 98
		}
	}
	return a.Exit
}

// flood prints coloured notice lines like a chatty daemon, 64 KiB at a time.
func flood(n int64) {
	line := []byte("\x1b[90mNov 29 12:25:02.640\x1b[0m \x1b[33mNTC\x1b[0m noise line from a very chatty ctrld daemon, nothing to see here\n")
	buf := make([]byte, 0, 64<<10)
	for len(buf)+len(line) <= cap(buf) {
		buf = append(buf, line...)
	}
	for n > 0 {
		chunk := buf
		if int64(len(chunk)) > n {
			chunk = chunk[:n]
		}
		if _, err := os.Stdout.Write(chunk); err != nil {
			return
		}
		n -= int64(len(chunk))
	}
}
