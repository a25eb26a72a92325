package localpg

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// UsableDataDir returns preferred, made absolute, if the server will be able
// to reach it, and otherwise a directory under /tmp that it can, the same one
// each time for the same preferred directory. fellBack reports the second
// case, so the caller can say where the data went.
//
// Only root can need the fallback: the server then runs as the user postgres,
// which cannot enter a home directory such as /root (mode 0700), and so not a
// checkout inside it either.
func UsableDataDir(preferred string) (dir string, fellBack bool, err error) {
	abs, err := filepath.Abs(preferred)
	if err != nil {
		return "", false, fmt.Errorf("data directory: %w", err)
	}
	owner, err := serverAccount()
	if err != nil {
		return "", false, err
	}
	dir, fellBack = usableDataDir(abs, owner)
	return dir, fellBack, nil
}

func usableDataDir(abs string, owner *account) (string, bool) {
	if owner == nil || blocker(abs, *owner) == "" {
		return abs, false
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join("/tmp", "localpg-"+hex.EncodeToString(sum[:6]), filepath.Base(abs)), true
}

// blocker returns the first directory on the way to dir that a cannot pass
// through, or "" if there is none. Directories that do not exist yet do not
// block: Start creates them, open to all. Symbolic links are resolved, since
// the server has to pass through their targets too.
func blocker(dir string, a account) string {
	p := filepath.Dir(dir)
	for {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) || p == filepath.Dir(p) {
			break
		}
		p = filepath.Dir(p)
	}
	p, err := filepath.EvalSymlinks(p)
	if err != nil {
		return filepath.Dir(dir)
	}
	for {
		fi, err := os.Stat(p)
		if err != nil {
			return p
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || !canEnter(fi.Mode(), st.Uid, st.Gid, a) {
			return p
		}
		if p == filepath.Dir(p) {
			return ""
		}
		p = filepath.Dir(p)
	}
}

// canEnter applies the permission check of a directory with mode, owner uid
// and group gid to a: only the owner's bits count for the owner and only the
// group's for a member, as in the kernel. ACLs are ignored: they are rare on
// the directories in question.
func canEnter(mode fs.FileMode, uid, gid uint32, a account) bool {
	perm := mode.Perm()
	switch {
	case uid == a.uid:
		return perm&0o100 != 0
	case gid == a.gid || slices.Contains(a.groups, gid):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}
