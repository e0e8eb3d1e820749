package commands

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// memStatus is serverStatus.mem: the process's resident and virtual sizes
// in MiB, from /proc/self/statm.
func memStatus() bson.D {
	d := bson.D{{Key: "bits", Value: int32(strconv.IntSize)}}
	raw, err := os.ReadFile("/proc/self/statm")
	f := bytes.Fields(raw)
	if err != nil || len(f) < 2 {
		return append(d, bson.E{Key: "supported", Value: false})
	}
	virt, _ := strconv.ParseInt(string(f[0]), 10, 64)
	res, _ := strconv.ParseInt(string(f[1]), 10, 64)
	page := int64(os.Getpagesize())
	return append(d,
		bson.E{Key: "resident", Value: int32(res * page >> 20)},
		bson.E{Key: "virtual", Value: int32(virt * page >> 20)},
		bson.E{Key: "supported", Value: true},
	)
}

// extraInfo is serverStatus.extra_info on Linux: the process's resource
// usage from getrusage, in MongoDB's field names and order.
func extraInfo() bson.D {
	d := bson.D{{Key: "note", Value: "fields vary by platform"}}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return d
	}
	return append(d,
		bson.E{Key: "user_time_us", Value: number(ru.Utime.Nano() / 1000)},
		bson.E{Key: "system_time_us", Value: number(ru.Stime.Nano() / 1000)},
		bson.E{Key: "maximum_resident_set_kb", Value: number(ru.Maxrss)},
		bson.E{Key: "input_blocks", Value: number(ru.Inblock)},
		bson.E{Key: "output_blocks", Value: number(ru.Oublock)},
		bson.E{Key: "page_reclaims", Value: number(ru.Minflt)},
		bson.E{Key: "page_faults", Value: number(ru.Majflt)},
		bson.E{Key: "voluntary_context_switches", Value: number(ru.Nvcsw)},
		bson.E{Key: "involuntary_context_switches", Value: number(ru.Nivcsw)},
	)
}

// hostMemory is hostInfo's memSizeMB (the machine's memory, from
// sysinfo) and memLimitMB (lower when the process's cgroup, v2, limits
// it).
func hostMemory() bson.D {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return nil
	}
	size := int64(si.Totalram) * int64(si.Unit) >> 20
	limit := size
	if raw, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err == nil && n>>20 < limit {
			limit = n >> 20
		}
	}
	return bson.D{{Key: "memSizeMB", Value: size}, {Key: "memLimitMB", Value: limit}}
}
