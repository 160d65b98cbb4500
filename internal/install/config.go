package install

import (
	"context"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

// Secret is how ctrld is told whom it belongs to: the provisioning token
// (--cd-org) or a resolver ID (--cd). Its value goes to ctrld's argv and
// nowhere else; String hides it from any accidental formatting.
type Secret struct {
	flag  string
	value string
}

// Token returns a provisioning-token secret.
func Token(v string) Secret { return Secret{flag: FlagToken, value: v} }

// Resolver returns a resolver-ID secret.
func Resolver(v string) Secret { return Secret{flag: FlagResolver, value: v} }

// The flags ctrld-install itself passes to ctrld start.
const (
	FlagToken    = parse.FeatureCdOrg
	FlagResolver = parse.FeatureCd
)

// Flag is the ctrld flag the secret is passed with.
func (s Secret) Flag() string { return s.flag }

// Given reports whether a token or resolver was given at all.
func (s Secret) Given() bool { return s.value != "" }

// IsToken reports whether the secret is a provisioning token.
func (s Secret) IsToken() bool { return s.flag == FlagToken }

// String never shows the value.
func (s Secret) String() string { return s.flag + " <redacted>" }

// GoString never shows the value.
func (s Secret) GoString() string { return s.String() }

// Config is a validated request. Fields that a command does not use are
// ignored by it.
type Config struct {
	Ctrld       string // absolute path of the ctrld binary
	CtrldArgv0  string // argv[0] for ctrld; its path when empty
	Home        string
	ResultFile  string
	ServiceFile string   // "" where the platform checks its service manager instead
	ServiceLogs []string // the daemon's own logs, read for what this run appended
	Timeout     time.Duration
	// Settle is how long the device is given to come up and answer after
	// a command that changed it (SettleWindow); zero checks once.
	Settle     time.Duration
	Retries    int
	MinVersion *parse.Version
	Force      bool // provision even when ctrld is already provisioned and running
	DryRun     bool // observe and plan, change nothing
	Cleanup    bool // uninstall: pass --cleanup

	// Secret reads the token or resolver ID (install) or the deactivation
	// PIN (uninstall, optional) inside the run's budget, so a source that
	// never delivers cannot hang the run.
	Secret func(ctx context.Context) (Secret, error)
	Extra  []string // passed to ctrld start after the secret

	InstallerVersion string
	Env              []string // the child's environment, NO_COLOR included
}

// Deps are the pipeline's ways of touching the world, injected so that
// retries, the budget, interruption, the lock and the skip path are
// table-tested in-process.
type Deps struct {
	// Run runs one ctrld command.
	Run func(ctx context.Context, c runner.Command) (runner.Result, error)
	// Sleep waits d or until ctx is done, returning ctx's error then.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
	// Privileged reports whether the process may install services.
	Privileged func() (bool, error)
	// ServiceRegistered is the service-definition post-condition.
	ServiceRegistered func(serviceFile string) bool
	// CheckHome refuses a home directory someone else controls; it creates
	// a missing one.
	CheckHome func(dir string) error
	// Executable reports whether ctrld can be run.
	Executable func(path string) bool
	// LockHeld reports whether a run holds the home's lock.
	LockHeld func(home string) bool
	// Definition reads the installed service's definition.
	Definition func(serviceFile string) (parse.Definition, bool)
	// DaemonRunsBinary compares the binary the running daemon was started
	// from with the file at path (pidFile from the definition, or "").
	DaemonRunsBinary func(ctx context.Context, pidFile, path string) parse.Same
	// DaemonExecutable names a file the running daemon's binary can be
	// read from as it started, "" where there is none; nil for none.
	DaemonExecutable func(ctx context.Context, pidFile string) string
	// Lock takes the home's run lock, waiting while ctx allows.
	Lock func(ctx context.Context, home string) (*lock.Lock, error)
	// Systemd says whether systemd manages the service whose definition is
	// serviceFile, and how to ask it; nil for never.
	Systemd func(serviceFile string) (platform.Systemd, bool)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
