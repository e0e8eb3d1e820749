package commands

import "testing"

// TestLatencyBuckets: a latency falls in the bucket whose lower bound is
// the largest at or below it, over MongoDB's 51 bounds: powers of two,
// with those from 2^11 to 2^21 microseconds split in halves.
func TestLatencyBuckets(t *testing.T) {
	var bounds []int64
	for i := range latencyBuckets {
		bounds = append(bounds, latencyBucketBound(i))
	}
	want := []int64{0, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
		49152, 65536, 98304, 131072, 196608, 262144, 393216, 524288, 786432, 1048576, 1572864, 2097152, 4194304}
	for i, b := range want {
		if bounds[i] != b {
			t.Fatalf("bound %d = %d, want %d", i, bounds[i], b)
		}
	}
	if last := bounds[latencyBuckets-1]; last != 1<<40 {
		t.Fatalf("last bound %d", last)
	}
	for i := 1; i < latencyBuckets; i++ {
		if bounds[i] <= bounds[i-1] {
			t.Fatalf("bounds not increasing at %d", i)
		}
	}
	for _, micros := range []uint64{0, 1, 2, 3, 1023, 1024, 2047, 2048, 3071, 3072, 4095, 4096, 6143, 6144, 2097151, 2097152, 1 << 39, 1<<40 - 1, 1 << 40, 1 << 62} {
		b := latencyBucket(micros)
		lo := latencyBucketBound(b)
		if int64(micros) < lo || b+1 < latencyBuckets && int64(micros) >= latencyBucketBound(b+1) {
			t.Errorf("%d µs in bucket %d [%d, %d)", micros, b, lo, latencyBucketBound(min(b+1, latencyBuckets-1)))
		}
	}
}
