package sessions

import (
	"sync/atomic"
	"time"
)

// seenBy is what the session cache knows of a session, readable while a
// command holds the session: when it was last used and by whom.
type seenBy struct {
	lastUse atomic.Int64           // Unix milliseconds
	owner   atomic.Pointer[string] // "user@db"; "" without access control
}

// Info is a session as $listLocalSessions reports it (MongoDB's logical
// session record).
type Info struct {
	ID      string // the session's key (Key)
	Owner   string // "user@db" of its user; "" without access control, or until a session loaded from its record is used
	LastUse time.Time
}

// Claim records owner as the user of s, unless one already is. The caller
// holds s.
func (s *Session) Claim(owner string) {
	if s.seen.owner.Load() != nil {
		return
	}
	o := owner // a copy made only for a session's first claim
	s.seen.owner.CompareAndSwap(nil, &o)
}

// List describes the sessions the registry holds, busy ones included.
func (r *Registry) List() []Info {
	all := r.all()
	out := make([]Info, 0, len(all))
	for _, s := range all {
		info := Info{ID: s.ID, LastUse: time.UnixMilli(s.seen.lastUse.Load())}
		if o := s.seen.owner.Load(); o != nil {
			info.Owner = *o
		}
		out = append(out, info)
	}
	return out
}
