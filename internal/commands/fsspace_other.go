//go:build !unix

package commands

// fsSpace cannot measure the filesystem on this platform.
func fsSpace(string) (total, used int64, ok bool) { return 0, 0, false }
