//go:build !linux

package sorter

// PhysicalMemory is the machine's memory in bytes, 0 if unknown: Folio
// asks only Linux.
func PhysicalMemory() int64 { return 0 }
