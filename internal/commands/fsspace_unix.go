//go:build unix

package commands

import "syscall"

// fsSpace is the capacity of the filesystem holding path and the bytes in
// use on it (capacity less what an unprivileged user may still write), as
// dbStats' fsTotalSize and fsUsedSize report them.
func fsSpace(path string) (total, used int64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, false
	}
	total = int64(st.Blocks) * int64(st.Bsize)
	return total, total - int64(st.Bavail)*int64(st.Bsize), true
}
