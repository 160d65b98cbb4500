package install

import (
	"context"
	"errors"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// errNoSecret is the usage error of a run whose plan provisions with no
// token or resolver given.
var errNoSecret = errors.New("no token given: use --token, --token-file, --token-stdin, --resolver, --resolver-file, --resolver-stdin or CTRLD_PROVISION_TOKEN")

// secretFailure maps a secret that could not be read: a signal is an
// interruption; anything else (invalid, unreadable, not delivered within
// the budget) is the command line's mistake. The error's sentence never
// holds the value or the path.
func (r *run) secretFailure(err error) error {
	if errors.Is(err, context.Canceled) || r.interrupted() {
		return fail(codes.InstallerInterrupted)
	}
	r.out.Errorf("%s", err.Error())
	return fail(codes.InstallerUsage)
}
