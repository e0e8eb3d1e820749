package js

import (
	"context"
	"runtime"
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
}

// Engine is the process's JavaScript engine: the pool of VMs and the
// compiled programs they share.
type Engine struct {
	disabled bool
	memLimit int64
	pool     chan *vm
	mem      *watchdog
}

// New makes an engine.
func New(o Options) *Engine {
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	e := &Engine{disabled: o.Disabled, memLimit: o.MemoryLimit, pool: make(chan *vm, 2*runtime.GOMAXPROCS(0))}
	e.mem = newWatchdog()
	return e
}

// Enabled reports whether scripts may run.
func (e *Engine) Enabled() bool { return e != nil && !e.disabled }

// Op is one operation's access to the engine: every script it runs is
// interrupted when Ctx ends. A nil *Op (or one on a nil Engine) is a
// context where JavaScript is not available at all.
type Op struct {
	Engine *Engine
	Ctx    context.Context
}

// Enabled reports whether op may run scripts.
func (op *Op) Enabled() bool { return op != nil && op.Engine.Enabled() }

func (op *Op) context() context.Context {
	if op.Ctx == nil {
		return context.Background()
	}
	return op.Ctx
}
