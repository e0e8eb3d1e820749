package main

import (
	"math"
	"testing"
	"time"
)

func TestBucketRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 129, 1000, 123456, 1 << 30, 1<<40 - 1} {
		lo, hi := bucketRange(bucketOf(v))
		if v < lo || v > hi {
			t.Errorf("%d: bucket %d holds [%d, %d]", v, bucketOf(v), lo, hi)
		}
		if float64(hi-lo) > float64(v)/subBuckets {
			t.Errorf("%d: bucket [%d, %d] wider than 1/%d of the value", v, lo, hi, subBuckets)
		}
	}
	for i := 1; i < maxBucket; i++ {
		_, prevHi := bucketRange(i - 1)
		if lo, _ := bucketRange(i); lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, bucket %d ends at %d", i, lo, i-1, prevHi)
		}
	}
}

func TestPercentile(t *testing.T) {
	// uniform records 1..n microseconds.
	uniform := func(n int) []time.Duration {
		d := make([]time.Duration, n)
		for i := range d {
			d[i] = time.Duration(i+1) * time.Microsecond
		}
		return d
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"empty", nil, 50, 0},
		{"single", []time.Duration{5 * time.Millisecond}, 99, 5 * time.Millisecond},
		{"exact small", []time.Duration{10, 20, 30, 40}, 50, 20},
		{"exact small p100", []time.Duration{10, 20, 30, 40}, 100, 40},
		{"uniform p50", uniform(1000), 50, 500 * time.Microsecond},
		{"uniform p95", uniform(1000), 95, 950 * time.Microsecond},
		{"uniform p99", uniform(1000), 99, 990 * time.Microsecond},
		{"uniform p100 is max", uniform(1000), 100, time.Millisecond},
		{"outlier above p99", append(uniform(99), time.Second), 99, 99 * time.Microsecond},
		{"outlier is p100", append(uniform(99), time.Second), 100, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			for _, s := range tt.samples {
				h.Record(s)
			}
			got := h.Percentile(tt.p)
			if diff := math.Abs(float64(got - tt.want)); diff > float64(tt.want)/subBuckets {
				t.Errorf("p%v = %v, want %v (within 1/%d)", tt.p, got, tt.want, subBuckets)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	var a, b Histogram
	for i := 1; i <= 100; i++ {
		a.Record(time.Duration(i) * time.Millisecond)
		b.Record(time.Duration(i+100) * time.Millisecond)
	}
	a.Merge(&b)
	if a.Count() != 200 || a.Max() != 200*time.Millisecond {
		t.Fatalf("count %d max %v", a.Count(), a.Max())
	}
	if m := a.Mean(); m != 100500*time.Microsecond {
		t.Errorf("mean %v", m)
	}
	if p := a.Percentile(50); math.Abs(float64(p-100*time.Millisecond)) > float64(100*time.Millisecond)/subBuckets {
		t.Errorf("p50 %v", p)
	}
}
