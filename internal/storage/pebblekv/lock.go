package pebblekv

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
)

// lockFile is the file Pebble locks in its directory while the store is
// open.
const lockFile = "LOCK"

// explainOpen turns Pebble's failure to lock dir, which says only "resource
// temporarily unavailable", into an error naming the directory, the process
// holding it when the system can tell, and what to do about it.
func explainOpen(dir string, err error) error {
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		abs = dir
	}
	switch {
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EACCES):
		holder := "another process"
		if pid := lockHolder(filepath.Join(dir, lockFile)); pid > 0 {
			holder = fmt.Sprintf("another process (pid %d)", pid)
		}
		return fmt.Errorf("data directory %s is in use by %s, probably another folio server: stop that server, or start this one with another -dbpath (%w)", abs, holder, err)
	case strings.Contains(err.Error(), "lock held by current process"):
		return fmt.Errorf("data directory %s is already open in this process: close it first, or use another directory (%w)", abs, err)
	}
	return err
}
