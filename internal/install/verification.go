package install

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/dnscheck"
	"github.com/Control-D-Inc/ctrld-install/internal/listener"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// The device's evidence, the one definition of healthy that install,
// every action, the rollback and verify share (decide.PostConditions.
// Healthy): the service is registered, ctrld status says it runs, and
// ctrld's own listener answers where it can be told. The same checks
// polled in a settle window after a command that changed the device.

// SettleWindow is how long a daemon is given to come up and answer after
// the command that started it returned: ctrld's service manager may start
// it a moment later. Polled within the budget, first after settlePoll,
// then at twice the last wait, at most settlePollMax: a daemon that comes
// up at once is seen at once, and one that never does costs a few ctrld
// status calls, not thirty.
const (
	SettleWindow  = 15 * time.Second
	settlePoll    = 250 * time.Millisecond
	settlePollMax = 2 * time.Second
)

// postConditions checks what success needs: the service definition exists,
// ctrld status says the service runs, and its listener answers.
func (r *run) postConditions() decide.PostConditions {
	p := decide.PostConditions{Checked: true}
	p.ServiceFile = r.deps.ServiceRegistered(r.cfg.ServiceFile)
	if !p.ServiceFile && r.cmd != outcome.Uninstall {
		return p
	}
	p.StatusRunning, p.TimedOut = r.statusRunning()
	if p.StatusRunning && r.cmd != outcome.Uninstall {
		if addr, ok := r.listener(r.budget); ok {
			p.Listener, p.Answers = true, r.answers(addr)
		}
	}
	return p
}

// statusRunning asks ctrld status whether the service runs. timedOut says
// the run's budget ran out first, so the answer is not known.
func (r *run) statusRunning() (running, timedOut bool) {
	if !r.deps.Executable(r.cfg.Ctrld) {
		return false, false // uninstall --cleanup removes the binary itself
	}
	ctx, cancel := context.WithTimeout(r.budget, statusBudget)
	defer cancel()
	if sd, ok := r.systemd(); ok && r.cmd != outcome.Uninstall {
		// ctrld status calls a unit waiting out its RestartSec running,
		// exit 0, with no daemon: systemd's word comes first.
		if u, known := r.unitState(ctx, sd); known && !u.Running() {
			return false, false
		}
	}
	c := r.command(r.form(parse.FeatureStatus)...)
	c.Brief = true
	res, err := r.deps.Run(ctx, c)
	if err == nil && (res.TimedOut || res.Canceled) && r.budget.Err() != nil && !r.interrupted() {
		return false, true
	}
	return err == nil && !res.TimedOut && !res.Canceled && res.ExitCode == 0, false
}

// listener is the address of ctrld's first listener: --listen in the
// service's arguments, else the ctrld.toml its --config names or the one
// in the home. ok is false when it cannot be told: then the device is
// judged by the rest, never by an address guessed for it.
func (r *run) listener(ctx context.Context) (string, bool) {
	def, defOK := r.deps.Definition(r.cfg.ServiceFile)
	if defOK {
		if a := def.Listen(); a != "" {
			return a, true
		}
	}
	path := filepath.Join(r.cfg.Home, "ctrld.toml")
	if defOK && def.Config() != "" {
		path = def.Config()
	}
	var b []byte
	err := safefile.OpenContext(ctx, path, safefile.Rules{Follow: true, Owner: safefile.AnyOwner}, func(f *os.File, _ fs.FileInfo) error {
		var err error
		b, err = io.ReadAll(io.LimitReader(f, listener.MaxSize+1))
		return err
	})
	if err != nil {
		return "", false
	}
	// ctrld's built-in listener, when the file names none, is probed at
	// start and may not be where the default says: not told either.
	addr, state := listener.Addr(b)
	return addr, state == listener.Found
}

// dnsWait bounds one question to the listener. ctrld 1.3.6 and later
// answer ctrld.test. themselves, at once; older releases only once their
// upstream did, which may take its whole timeout (5 s in the ctrld.toml
// ctrld writes).
const (
	dnsWait       = 2 * time.Second
	dnsWaitLegacy = 6 * time.Second
)

// answers asks the listener one DNS question: ctrld's own answer to
// ctrld.test. where the release gives one, any answer before it.
func (r *run) answers(addr string) bool {
	selfAnswers := parse.FlagSupported(r.version, parse.FeatureSelfCheckName)
	wait := dnsWait
	if !selfAnswers {
		wait = dnsWaitLegacy
	}
	ctx, cancel := context.WithTimeout(r.budget, wait)
	defer cancel()
	switch dnscheck.Ask(ctx, addr) {
	case dnscheck.Ctrld:
		return true
	case dnscheck.Other:
		// Another resolver holds the address: that is not ctrld's health,
		// unless the release cannot say it is ctrld.
		return !selfAnswers
	}
	return false
}

// settled is the post-conditions once the device has settled: asked again,
// at growing intervals, for up to Config.Settle (a quarter of --timeout
// when that is shorter), until they hold. A service definition that is
// gone does not come back by itself.
func (r *run) settled() decide.PostConditions { return r.settle(true) }

// settle is settled; applied says a command should have started the
// binary the service starts, so that a daemon still running another one
// has not applied it. Without it, any healthy daemon will do.
func (r *run) settle(applied bool) decide.PostConditions {
	window := min(r.cfg.Settle, r.cfg.Timeout/4)
	deadline := r.deps.Now().Add(window)
	wait := settlePoll
	for {
		p := r.postConditions()
		if applied && p.Healthy() && r.runsOtherBuild() {
			p.OtherBuild = true
		}
		if p.Healthy() || !p.Checked || !p.ServiceFile || p.TimedOut || r.budget.Err() != nil {
			return p
		}
		// The last question is asked at the window's end, not skipped
		// for want of a whole interval.
		left := deadline.Sub(r.deps.Now())
		if left <= 0 {
			return p
		}
		if r.deps.Sleep(r.budget, min(wait, left)) != nil {
			return p
		}
		wait = min(2*wait, settlePollMax)
	}
}

// runsOtherBuild reports whether the running daemon is known not to have
// been started from the binary its service starts, after a command that
// should have started it: a restart that left the old daemon running has
// not applied the build on disk. A device that cannot tell is believed.
func (r *run) runsOtherBuild() bool {
	if r.deps.DaemonRunsBinary == nil {
		return false
	}
	binary := r.cfg.Ctrld
	def, ok := r.deps.Definition(r.cfg.ServiceFile)
	if ok {
		binary = def.Binary()
	}
	return r.deps.DaemonRunsBinary(r.budget, def.PIDFile, binary) == parse.SameNo
}

// systemd is how to ask systemd about ctrld's unit, when it manages it.
func (r *run) systemd() (platform.Systemd, bool) {
	if r.deps.Systemd == nil {
		return platform.Systemd{}, false
	}
	return r.deps.Systemd(r.cfg.ServiceFile)
}

// systemctl is a systemctl command, run as ctrld's are.
func (r *run) systemctl(sd platform.Systemd, args ...string) runner.Command {
	return runner.Command{Path: sd.Systemctl, Args: args, Dir: r.workDir, Env: r.cfg.Env}
}

// unitState asks systemd what state ctrld's unit is in; known is false
// when it does not say.
func (r *run) unitState(ctx context.Context, sd platform.Systemd) (u parse.UnitState, known bool) {
	var out []byte
	c := r.systemctl(sd, "show", "-p", "ActiveState", "-p", "SubState", sd.Unit)
	c.Brief = true
	c.Line = func(b []byte) {
		if len(out) < 4<<10 {
			out = append(append(out, b...), '\n')
		}
	}
	res, err := r.deps.Run(ctx, c)
	if err != nil || res.TimedOut || res.Canceled || res.ExitCode != 0 {
		return parse.UnitState{}, false
	}
	return parse.ParseUnitState(out)
}
