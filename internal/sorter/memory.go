package sorter

import (
	"math"
	"runtime/debug"
	"sync/atomic"
)

// EntryOverhead is the memory an entry costs beyond its key and document
// bytes: the Entry header in the sorter's slice (with the slack append
// leaves) and the rounding of the key's and document's allocations to Go's
// size classes. TestAccountingMatchesHeap keeps it within 1.5x of what the
// heap measures.
const EntryOverhead = 152

// Size is the accounted memory of an entry with key and document sizes.
func Size(key, doc int) int64 { return int64(key+doc) + EntryOverhead }

// reserveChunk is how much an Account takes from its Budget at once, so
// that concurrent stages do not contend on the budget for every document.
const reserveChunk = 1 << 20

// Budget is a process-wide bound in bytes on the memory that blocking
// stages (sorts, $group, $bucketAuto, $lookup matches) hold at once: each
// stage reserves from it before it grows, and a stage the budget refuses
// spills to disk when allowed or fails with
// QueryExceededMemoryLimitNoDiskUseAllowed. So N clients cannot multiply
// the per-operation limit beyond it.
type Budget struct {
	limit atomic.Int64
	used  atomic.Int64
	peak  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget {
	b := &Budget{}
	b.limit.Store(limit)
	return b
}

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit.Load() }

// SetLimit resizes the budget; reservations above the new size stay until
// they are released, and no new one is granted until use falls below it.
func (b *Budget) SetLimit(n int64) { b.limit.Store(n) }

// Used is the memory reserved now.
func (b *Budget) Used() int64 { return b.used.Load() }

// Peak is the most memory ever reserved at once.
func (b *Budget) Peak() int64 { return b.peak.Load() }

// TryReserve takes n bytes if the budget has them.
func (b *Budget) TryReserve(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit.Load() {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			for {
				p := b.peak.Load()
				if u+n <= p || b.peak.CompareAndSwap(p, u+n) {
					return true
				}
			}
		}
	}
}

// Release gives n reserved bytes back.
func (b *Budget) Release(n int64) { b.used.Add(-n) }

// global is the process's budget (see defaultBudget).
var global = NewBudget(defaultBudget())

// Global is the budget blocking stages reserve from unless told otherwise.
func Global() *Budget { return global }

// DefaultMinBudget is the floor of the default budget: one operation's
// default limit (MongoDB's 100 MiB).
const DefaultMinBudget = 100 << 20

// defaultBudget is a quarter of the memory the process may use: its Go
// memory limit (GOMEMLIMIT) when set, else the machine's memory where the
// system tells it, else 4 GiB; never below DefaultMinBudget.
func defaultBudget() int64 {
	mem := debug.SetMemoryLimit(-1)
	if mem == math.MaxInt64 {
		if mem = PhysicalMemory(); mem <= 0 {
			mem = 4 << 30
		}
	}
	return max(mem/4, DefaultMinBudget)
}

// Account is the memory of one blocking stage: at most limit bytes, each
// reserved from the budget before use. It is not safe for concurrent use.
type Account struct {
	limit    int64
	budget   *Budget
	used     int64
	reserved int64
}

// NewAccount returns an account of at most limit bytes reserved from
// budget (nil: the global budget).
func NewAccount(limit int64, budget *Budget) *Account {
	if budget == nil {
		budget = global
	}
	return &Account{limit: limit, budget: budget}
}

// Limit is the account's per-operation limit.
func (a *Account) Limit() int64 { return a.limit }

// Used is the memory the stage holds now.
func (a *Account) Used() int64 { return a.used }

// Grow accounts for n more bytes; it is false, and accounts nothing, when
// they would take the stage past its limit or the budget refuses them.
func (a *Account) Grow(n int64) bool {
	want := a.used + n
	if want > a.limit {
		return false
	}
	if want > a.reserved {
		need := want - a.reserved
		chunk := min(max(need, reserveChunk), a.limit-a.reserved)
		if !a.budget.TryReserve(chunk) {
			if chunk == need || !a.budget.TryReserve(need) {
				return false
			}
			chunk = need
		}
		a.reserved += chunk
	}
	a.used = want
	return true
}

// Shrink accounts for n bytes freed; they stay reserved for the stage.
func (a *Account) Shrink(n int64) { a.used -= n }

// Release frees everything the stage held and gives its reservation back.
func (a *Account) Release() {
	a.budget.Release(a.reserved)
	a.used, a.reserved = 0, 0
}
