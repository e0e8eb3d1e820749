package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestYCSBKey(t *testing.T) {
	// The first keys YCSB's load phase inserts.
	for n, want := range []string{"user6284781860667377211", "user8517097267634966620", "user1820151046732198393"} {
		if got := ycsbKey(int64(n)); got != want {
			t.Errorf("ycsbKey(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestZeta(t *testing.T) {
	tests := []struct {
		n    int64
		want float64
	}{
		{1, 1},
		{2, 1 + math.Pow(2, -0.99)},
		{3, 1 + math.Pow(2, -0.99) + math.Pow(3, -0.99)},
	}
	for _, tt := range tests {
		if got := zeta(0, tt.n, zipfianConstant, 0); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("zeta(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
	// Extending a sum incrementally gives the sum computed at once.
	if a, b := zeta(1000, 5000, zipfianConstant, zeta(0, 1000, zipfianConstant, 0)), zeta(0, 5000, zipfianConstant, 0); math.Abs(a-b) > 1e-9 {
		t.Errorf("incremental zeta %v, direct %v", a, b)
	}
}

// TestZipfian checks the frequencies of the most popular items against
// P(i) = 1/((i+1)^theta * zeta(n)), and the range of every draw. Gray's
// method is exact for items 0 and 1 and approximates the rest by a
// continuous curve (item 2 comes out up to 20% too popular, in YCSB too).
func TestZipfian(t *testing.T) {
	const draws = 200_000
	tests := []struct {
		name string
		n    int64
		grow int64 // item count for a second round of draws, 0 for none
	}{
		{"ten items", 10, 0},
		{"thousand items", 1000, 0},
		{"hundred thousand items", 100_000, 0},
		{"grown from 1000 to 2000", 1000, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			z := newZipfian(tt.n)
			n := tt.n
			if tt.grow > 0 {
				for range 1000 {
					z.next(r, n)
				}
				n = tt.grow
			}
			counts := map[int64]int{}
			for range draws {
				v := z.next(r, n)
				if v < 0 || v >= n {
					t.Fatalf("draw %d outside [0, %d)", v, n)
				}
				counts[v]++
			}
			zn := zeta(0, n, zipfianConstant, 0)
			for i, tol := range []float64{0.05, 0.05, 0.25} {
				want := 1 / (math.Pow(float64(i+1), zipfianConstant) * zn)
				got := float64(counts[int64(i)]) / draws
				if math.Abs(got-want) > tol*want+0.002 {
					t.Errorf("P(%d) = %.4f, want %.4f", i, got, want)
				}
			}
		})
	}
}

func TestScrambledAndLatest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := newScrambled()
	const n = 1000
	counts := map[int64]int{}
	for range 100_000 {
		v := s.next(r, n)
		if v < 0 || v >= n {
			t.Fatalf("scrambled draw %d outside [0, %d)", v, n)
		}
		counts[v]++
	}
	hottest, top := int64(0), 0
	for k, c := range counts {
		if c > top {
			hottest, top = k, c
		}
	}
	// The hottest record is not record 0: popularity is scrambled.
	if hottest == 0 || float64(top)/100_000 < 0.03 {
		t.Errorf("hottest record %d drawn %d times: not skewed and scrambled", hottest, top)
	}

	l := latest{newZipfian(n)}
	counts = map[int64]int{}
	last := int64(n - 1)
	for i := range 100_000 {
		if i%100 == 0 {
			last++ // inserts arrive
		}
		v := l.next(r, last)
		if v < 0 || v > last {
			t.Fatalf("latest draw %d outside [0, %d]", v, last)
		}
		counts[last-v]++
	}
	if counts[0] < counts[1] || counts[1] < counts[5] || counts[0] < 100_000/10 {
		t.Errorf("latest: distance 0 drawn %d times, 1 %d, 5 %d: newest records not the most popular", counts[0], counts[1], counts[5])
	}
}
