//go:build unix

package server

import "syscall"

// fdLimit is the process's file descriptor soft limit, or 0 if unknown.
func fdLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Cur
}
