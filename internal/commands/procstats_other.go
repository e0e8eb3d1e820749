//go:build !linux

package commands

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// memStatus is serverStatus.mem where Folio cannot read the process's
// memory sizes.
func memStatus() bson.D {
	return bson.D{{Key: "bits", Value: int32(strconv.IntSize)}, {Key: "supported", Value: false}}
}

// extraInfo is serverStatus.extra_info where Folio has no platform
// figures.
func extraInfo() bson.D {
	return bson.D{{Key: "note", Value: "fields vary by platform"}}
}

// hostMemory is nothing where Folio cannot read the machine's memory.
func hostMemory() bson.D { return nil }
