//go:build !unix

package pebblekv

import (
	"errors"
	"math"
	"syscall"
)

// Statfs reports unlimited space where Folio does not read the
// filesystem's free space (not unix): the disk reserve is not enforced.
func Statfs(string) (uint64, error) { return math.MaxUint64, nil }

// isNoSpace reports whether err says the filesystem is full.
func isNoSpace(err error) bool { return err != nil && errors.Is(err, syscall.ENOSPC) }
