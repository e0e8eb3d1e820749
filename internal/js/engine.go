package js

import (
	"context"
	"runtime"
	"sync"
)

// DefaultMemoryLimit bounds what one script may grow the heap by (see
// memory.go for what exactly is measured).
const DefaultMemoryLimit = 256 << 20

// maxCallStack is the depth of JavaScript calls past which a script fails
// with a RangeError instead of overflowing the Go stack.
const maxCallStack = 4096

// Options configure an Engine.
type Options struct {
	// Disabled is MongoDB's security.javascriptEnabled=false: every script
	// is refused.
	Disabled bool
	// MemoryLimit is the per-script memory limit in bytes; 0 is
	// DefaultMemoryLimit.
	MemoryLimit int64
	// Stored reads a database's system.js for Op.LoadStored; nil: no
	// stored scripts.
	Stored StoredLoader
}

// Engine is the process's JavaScript engine: the pool of VMs and the
// compiled programs they share.
type Engine struct {
	disabled bool
	memLimit int64
	mem      *watchdog
	stored   StoredLoader

	mu    sync.Mutex
	pools map[string]chan *vm
}

// maxPools bounds the pool keys kept; past it the idle VMs are dropped.
const maxPools = 256

// New makes an engine.
func New(o Options) *Engine {
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	e := &Engine{disabled: o.Disabled, memLimit: o.MemoryLimit, stored: o.Stored, pools: map[string]chan *vm{}}
	e.mem = newWatchdog()
	return e
}

// pool is the idle VMs of key.
func (e *Engine) pool(key string) chan *vm {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.pools[key]
	if p == nil {
		if len(e.pools) >= maxPools {
			e.pools = map[string]chan *vm{}
		}
		p = make(chan *vm, 2*runtime.GOMAXPROCS(0))
		e.pools[key] = p
	}
	return p
}

// Enabled reports whether scripts may run.
func (e *Engine) Enabled() bool { return e != nil && !e.disabled }

// Op is one operation's access to the engine: every script it runs is
// interrupted when Ctx ends. A nil *Op (or one on a nil Engine) is a
// context where JavaScript is not available at all.
type Op struct {
	Engine *Engine
	Ctx    context.Context
	// Pool names the VMs the operation may reuse: globals a script
	// leaves behind are seen by later scripts of the same pool only.
	Pool string
	// DB is the operation's database, whose system.js LoadStored reads.
	DB string
	// stored is what LoadStored read, nil before.
	stored *storedScripts
}

// Enabled reports whether op may run scripts.
func (op *Op) Enabled() bool { return op != nil && op.Engine.Enabled() }

func (op *Op) context() context.Context {
	if op.Ctx == nil {
		return context.Background()
	}
	return op.Ctx
}
