package localpg

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The exports below let programs built on PostgreSQL's own (such as
// pg_auto_failover's pg_autoctl, in bench/hapg) run the way this package
// runs the server: as the OS user the server would run as, from a working
// directory that user can enter.

// BinDir returns the directory holding the server programs (initdb,
// pg_ctl, postgres): PG_BIN if set, else Debian's location, else wherever
// PATH finds pg_ctl.
func BinDir() (string, error) {
	return findBin()
}

// ServerCommand returns a command that runs name as the OS user the server
// runs as: postgres when we are root (the server programs refuse root),
// ourselves otherwise. A bare name is looked up in BinDir first, then on
// PATH. The command runs from /, because the programs locate themselves
// through the working directory and fail when that user cannot enter it.
func ServerCommand(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	r, err := newRunner()
	if err != nil {
		return nil, err
	}
	path := name
	if !strings.Contains(name, "/") {
		if p := filepath.Join(r.bin, name); isExecutable(p) {
			path = p
		} else if path, err = exec.LookPath(name); err != nil {
			return nil, fmt.Errorf("find %s: %w", name, err)
		}
	}
	return r.command(ctx, path, args...), nil
}

// GiveToServer makes paths belong to the OS user the server runs as, so
// that its programs can write there; it does nothing when that user is us.
func GiveToServer(paths ...string) error {
	owner, err := serverAccount()
	if err != nil {
		return err
	}
	return runner{owner: owner}.own(paths...)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
