//go:build !unix

package server

// fdLimit is 0 (unknown) where there is no file descriptor limit to read.
func fdLimit() uint64 { return 0 }
