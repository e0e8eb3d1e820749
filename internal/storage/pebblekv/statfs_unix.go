//go:build unix

package pebblekv

import (
	"errors"
	"syscall"
)

// Statfs is the FreeSpaceFunc of the running system.
func Statfs(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// isNoSpace reports whether err says the filesystem, or the user's quota on
// it, is full.
func isNoSpace(err error) bool {
	return err != nil && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT))
}
