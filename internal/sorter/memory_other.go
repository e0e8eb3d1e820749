//go:build !linux

package sorter

// physicalMemory is the machine's memory in bytes, 0 if unknown: Folio
// asks only Linux.
func physicalMemory() int64 { return 0 }
