package commands

import (
	"math/bits"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// latencyClass is how MongoDB's Top files an operation's latency: its
// command's read/write type.
type latencyClass int

const (
	latencyReads latencyClass = iota
	latencyWrites
	latencyCommands
	latencyTransactions
	latencyClasses
)

// latencyClassNames are the classes as latencyStats names them.
var latencyClassNames = [latencyClasses]string{"reads", "writes", "commands", "transactions"}

// latencyBuckets is the number of histogram buckets: powers of two, with
// the ones from 2^11 to 2^21 microseconds split in halves.
const latencyBuckets = 51

// latencyBucketBound is bucket i's lower bound in microseconds.
func latencyBucketBound(i int) int64 {
	switch {
	case i == 0:
		return 0
	case i <= 11:
		return 1 << i
	case i < 31:
		// 2^11, 3*2^10, 2^12, 3*2^11, ...: even buckets are powers of two
		n := 11 + (i-11)/2
		if (i-11)%2 == 1 {
			return 3 << (n - 1)
		}
		return 1 << n
	default:
		return 1 << (i - 10)
	}
}

// latencyBucket is the bucket of a latency in microseconds.
func latencyBucket(micros uint64) int {
	if micros == 0 {
		return 0
	}
	log2 := 63 - bits.LeadingZeros64(micros)
	switch {
	case log2 < 11:
		return log2
	case log2 < 21:
		b := log2 + log2 - 11
		if micros >= 3<<(log2-1) {
			b++
		}
		return b
	default:
		return min(log2+10, latencyBuckets-1)
	}
}

// latencyStats are MongoDB's operation latency histograms of one
// collection: for each class, the operations, their total latency and
// how many fell in each bucket.
type latencyStats [latencyClasses]struct {
	ops, micros int64
	buckets     [latencyBuckets]int64
}

func (l *latencyStats) add(c latencyClass, micros int64) {
	h := &l[c]
	h.ops++
	h.micros += micros
	h.buckets[latencyBucket(uint64(micros))]++
}

// doc is l as $collStats' latencyStats shows it: per class, the non-empty
// buckets when histograms is set, then latency and ops.
func (l *latencyStats) doc(histograms bool) bson.D {
	out := make(bson.D, 0, latencyClasses)
	for c, h := range l {
		var d bson.D
		if histograms {
			buckets := bson.A{}
			for i, n := range h.buckets {
				if n > 0 {
					buckets = append(buckets, bson.D{{Key: "micros", Value: latencyBucketBound(i)}, {Key: "count", Value: n}})
				}
			}
			d = append(d, bson.E{Key: "histogram", Value: buckets})
		}
		d = append(d, bson.E{Key: "latency", Value: h.micros}, bson.E{Key: "ops", Value: h.ops})
		out = append(out, bson.E{Key: latencyClassNames[c], Value: d})
	}
	return out
}

// latencyClassOf is the class MongoDB files a command under: the
// commands that read documents, those that write them (a pipeline with
// $out or $merge among them), and the others.
func latencyClassOf(op *activeOp) latencyClass {
	switch op.name {
	case "find", "getMore", "count", "distinct":
		return latencyReads
	case "aggregate":
		if op.writes {
			return latencyWrites
		}
		return latencyReads
	case "insert", "update", "delete", "findAndModify", "findandmodify":
		return latencyWrites
	}
	return latencyCommands
}
