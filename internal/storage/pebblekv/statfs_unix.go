//go:build unix

package pebblekv

import "syscall"

// Statfs is the FreeSpaceFunc of the running system.
func Statfs(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}
