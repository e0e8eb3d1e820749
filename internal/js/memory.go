package js

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// What the memory limit bounds. goja allocates on the Go heap and has no
// heap limit of its own, so a script's memory is bounded two ways:
//
//   - Operations that build one large value at once (String.prototype
//     repeat, padStart, padEnd, Array.prototype.join) check the size of
//     their result against the limit before allocating it.
//   - Everything else grows the heap step by step; a watchdog samples the
//     process's heap every sampleEvery while scripts run. When the heap
//     has grown past a running script's limit since the script started,
//     it collects garbage and measures again (so garbage does not count),
//     and interrupts every script still over its limit.
//
// The second bound is process-wide: memory other goroutines allocate
// while a script runs counts against the script too. It stops a script
// within about sampleEvery of passing its limit, plus one collection.

const sampleEvery = 5 * time.Millisecond

// idleStop is how long the watchdog goroutine outlives the last script.
const idleStop = time.Second

// account is one running call's memory account.
type account struct {
	v        *vm
	base     uint64
	limit    uint64
	exceeded atomic.Bool
}

type watchdog struct {
	mu       sync.Mutex
	accounts map[*account]struct{}
	running  bool
	// idleTicks counts the samples taken with no script running.
	idleTicks int
	// heap is the latest sample of the heap's object bytes.
	heap atomic.Uint64
}

func newWatchdog() *watchdog { return &watchdog{accounts: map[*account]struct{}{}} }

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapSampleMu sync.Mutex

func readHeap() uint64 {
	heapSampleMu.Lock()
	defer heapSampleMu.Unlock()
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

func (w *watchdog) start(v *vm, limit int64) *account {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		w.running = true
		w.heap.Store(readHeap())
		go w.loop()
	}
	a := &account{v: v, base: w.heap.Load(), limit: uint64(limit)}
	v.mem = a
	w.accounts[a] = struct{}{}
	return a
}

func (w *watchdog) end(a *account) {
	w.mu.Lock()
	delete(w.accounts, a)
	w.mu.Unlock()
	a.v.mem = nil
}

func (w *watchdog) loop() {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for range t.C {
		h := readHeap()
		w.heap.Store(h)
		w.mu.Lock()
		if len(w.accounts) > 0 {
			w.idleTicks = 0
		} else if w.idleTicks++; time.Duration(w.idleTicks)*sampleEvery > idleStop {
			w.running = false
			w.idleTicks = 0
			w.mu.Unlock()
			return
		}
		over := false
		for a := range w.accounts {
			if h > a.base+a.limit {
				over = true
			}
		}
		w.mu.Unlock()
		if !over {
			continue
		}
		runtime.GC()
		h = readHeap()
		w.heap.Store(h)
		w.mu.Lock()
		for a := range w.accounts {
			if h > a.base+a.limit && !a.exceeded.Swap(true) {
				a.v.rt.Interrupt(errOutOfMemory)
			}
		}
		w.mu.Unlock()
	}
}

// limitGrowth wraps the builtins that make one large string at once so
// they check the result's size against the running script's limit first.
func limitGrowth(v *vm) {
	rt := v.rt
	check := func(n float64) {
		a := v.mem
		if a != nil && n > float64(a.limit) {
			a.exceeded.Store(true)
			rt.Interrupt(errOutOfMemory)
			panic(rt.NewGoError(errOutOfMemory))
		}
	}
	wrap := func(obj *goja.Object, name string, size func(this goja.Value, args []goja.Value) float64) {
		orig, _ := goja.AssertFunction(obj.Get(name))
		_ = obj.Set(name, func(c goja.FunctionCall) goja.Value {
			check(size(c.This, c.Arguments))
			r, err := orig(c.This, c.Arguments...)
			if err != nil {
				panic(err)
			}
			return r
		})
	}
	arg := func(args []goja.Value, i int) goja.Value {
		if i < len(args) {
			return args[i]
		}
		return goja.Undefined()
	}
	strLen := func(x goja.Value) float64 { return float64(len(x.String())) }
	str := rt.Get("String").ToObject(rt).Get("prototype").ToObject(rt)
	wrap(str, "repeat", func(this goja.Value, args []goja.Value) float64 {
		return strLen(this) * arg(args, 0).ToFloat()
	})
	pad := func(this goja.Value, args []goja.Value) float64 { return arg(args, 0).ToFloat() }
	wrap(str, "padStart", pad)
	wrap(str, "padEnd", pad)
	arr := rt.Get("Array").ToObject(rt).Get("prototype").ToObject(rt)
	wrap(arr, "join", func(this goja.Value, args []goja.Value) float64 {
		o := this.ToObject(rt)
		sep := 1.0
		if s := arg(args, 0); !goja.IsUndefined(s) {
			sep = strLen(s)
		}
		return o.Get("length").ToFloat() * sep
	})
}
