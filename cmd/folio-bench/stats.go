package main

import (
	"math/bits"
	"time"
)

// subBuckets is the number of histogram buckets per power of two: a recorded
// latency is known to within 1/subBuckets (1.6%) of its value.
const subBuckets = 64

// subBits is log2(subBuckets).
const subBits = 6

// maxBucket bounds the histogram: latencies up to 2^40 ns (about 18 minutes).
const maxBucket = (40-subBits+1)*subBuckets + subBuckets

// Histogram records latencies in log-linear buckets: exact below 64 ns, then
// 64 buckets per power of two. The zero value is ready to use; it is not safe
// for concurrent use (each client has its own, merged at the end).
type Histogram struct {
	counts [maxBucket]uint64
	n      uint64
	sum    time.Duration
	max    time.Duration
}

// bucketOf returns the bucket index of a latency of v nanoseconds.
func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1 // v>>shift is in [64, 128)
	i := (shift+1)*subBuckets + int(v>>shift) - subBuckets
	return min(i, maxBucket-1)
}

// bucketRange returns the smallest and largest latency in bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < subBuckets {
		return uint64(i), uint64(i)
	}
	shift := i/subBuckets - 1
	lo = uint64(i%subBuckets+subBuckets) << shift
	return lo, lo + 1<<shift - 1
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[bucketOf(uint64(d))]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

// Merge adds every latency recorded in o.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count is the number of latencies recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Mean is the average latency.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Max is the largest latency recorded.
func (h *Histogram) Max() time.Duration { return h.max }

// Percentile returns the latency at or below which p percent (0 < p <= 100)
// of the recorded latencies fall: the midpoint of the bucket holding the
// sample of that rank, capped at the largest latency recorded.
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(p / 100 * float64(h.n))
	if float64(rank) < p/100*float64(h.n) || rank == 0 {
		rank++ // the ceiling, and at least the first sample
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(i)
			return min(time.Duration(lo+(hi-lo)/2), h.max)
		}
	}
	return h.max
}
