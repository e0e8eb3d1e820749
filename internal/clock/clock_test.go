package clock

import (
	"sync"
	"testing"
	"time"
)

func TestTickMonotonic(t *testing.T) {
	wall := time.Unix(1000, 500_000)
	c := New(func() time.Time { return wall })
	if got := c.Now(); got.Secs() != 1000 || got.Inc() != 500 {
		t.Fatalf("start = %v, want Timestamp(1000, 500)", got)
	}
	a := c.Tick()
	b := c.Tick()
	if a != Time(1000)<<32|501 || b != a+1 {
		t.Fatalf("ticks under a stopped wall clock = %v, %v", a, b)
	}
	wall = time.Unix(1001, 0)
	if got := c.Tick(); got != Time(1001)<<32 {
		t.Fatalf("tick after the wall clock moved = %v, want Timestamp(1001, 0)", got)
	}
	wall = time.Unix(900, 0) // the wall clock steps back: times still grow
	if got := c.Tick(); got != Time(1001)<<32|1 {
		t.Fatalf("tick after the wall clock stepped back = %v", got)
	}
}

func TestAdvance(t *testing.T) {
	c := New(func() time.Time { return time.Unix(10, 0) })
	c.Advance(Time(5) << 32)
	if c.Now() != Time(10)<<32 {
		t.Fatalf("Advance to an earlier time moved the clock to %v", c.Now())
	}
	c.Advance(Time(20)<<32 | 7)
	if c.Now() != Time(20)<<32|7 || c.Tick() != Time(20)<<32|8 {
		t.Fatalf("Advance to a later time: now %v", c.Now())
	}
}

// TestRestartDoesNotGoBack: a clock started after another (a restart, a
// millisecond later) starts above every time the first one issued, at fewer
// than a million ticks per second.
func TestRestartDoesNotGoBack(t *testing.T) {
	wall := time.Unix(50, 100_000)
	first := New(func() time.Time { return wall })
	var last Time
	for i := 0; i < 500; i++ {
		last = first.Tick()
	}
	wall = wall.Add(time.Millisecond)
	second := New(func() time.Time { return wall })
	if second.Now() <= last {
		t.Fatalf("restarted clock at %v, below %v", second.Now(), last)
	}
}

func TestTickConcurrent(t *testing.T) {
	c := New(nil)
	const n, per = 8, 1000
	seen := make([][]Time, n)
	var wg sync.WaitGroup
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				seen[g] = append(seen[g], c.Tick())
			}
		}(g)
	}
	wg.Wait()
	all := map[Time]bool{}
	for _, ts := range seen {
		for i, x := range ts {
			if all[x] || i > 0 && x <= ts[i-1] {
				t.Fatalf("time %v issued twice or out of order", x)
			}
			all[x] = true
		}
	}
}
