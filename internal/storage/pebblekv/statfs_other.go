//go:build !unix

package pebblekv

import "math"

// Statfs reports unlimited space where Folio does not read the
// filesystem's free space (not unix): the disk reserve is not enforced.
func Statfs(string) (uint64, error) { return math.MaxUint64, nil }
