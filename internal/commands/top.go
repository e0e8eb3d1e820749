package commands

import (
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
)

func init() {
	registerAdmin(topCmd, untyped("top"), "top")
}

// usage is a time (microseconds) and a count of operations.
type usage struct{ time, count int64 }

func (u *usage) add(d time.Duration) {
	u.time += d.Microseconds()
	u.count++
}

// nsUsage is what top reports for one collection: all operations, split
// by the lock they take and by kind.
type nsUsage struct {
	total, readLock, writeLock                         usage
	queries, getmore, insert, update, remove, commands usage
	// latency is what $collStats' latencyStats reports.
	latency latencyStats
}

// record adds an ended operation on a collection to top's figures; o.mu
// is held. Commands on no collection (hello, serverStatus...) are not
// recorded, as MongoDB records only operations on a collection, and
// neither are those on a namespace MongoDB refuses: top's reply has a
// field per namespace, which must be a valid name.
func (o *opRegistry) record(op *activeOp, d time.Duration) {
	if op.notInTop {
		return
	}
	if op.ns == o.lastDropped {
		// the drop's own command, as MongoDB's Top skips it
		o.lastDropped = ""
		return
	}
	u := o.top[op.ns]
	if u == nil {
		// The name is checked once, when its entry is made.
		db, coll, ok := strings.Cut(op.ns, ".")
		if !ok || engine.ValidateDBName(db) != nil || engine.ValidateCollName(db, coll) != nil && !strings.HasPrefix(coll, "system.") {
			return
		}
		if o.top == nil {
			o.top = map[string]*nsUsage{}
		}
		u = &nsUsage{}
		o.top[op.ns] = u
	}
	u.total.add(d)
	u.latency.add(latencyClassOf(op), d.Microseconds())
	if writeCommands[op.name] {
		u.writeLock.add(d)
	} else {
		u.readLock.add(d)
	}
	switch op.name {
	case "find":
		u.queries.add(d)
	case "getMore":
		u.getmore.add(d)
	case "insert":
		u.insert.add(d)
	case "update":
		u.update.add(d)
	case "delete":
		u.remove.add(d)
	default:
		u.commands.add(d)
	}
}

// latencyDoc is $collStats' latencyStats of ns: zeros for a collection no
// operation has touched since the server started (or without a registry).
func (o *opRegistry) latencyDoc(ns string, histograms bool) bson.D {
	var l latencyStats
	if o != nil {
		o.mu.Lock()
		if u := o.top[ns]; u != nil {
			l = u.latency
		}
		o.mu.Unlock()
	}
	return l.doc(histograms)
}

// topCmd answers top: for every collection operations have touched, the
// time spent and the operation count, in total, by lock and by kind.
func topCmd(s *Service, _ *Request) (bson.Raw, error) {
	s.ops.mu.Lock()
	names := make([]string, 0, len(s.ops.top))
	for ns := range s.ops.top {
		names = append(names, ns)
	}
	sort.Strings(names)
	totals := bson.D{{Key: "note", Value: "all times in microseconds"}}
	for _, ns := range names {
		u := s.ops.top[ns]
		entry := func(name string, x usage) bson.E {
			return bson.E{Key: name, Value: bson.D{{Key: "time", Value: number(x.time)}, {Key: "count", Value: number(x.count)}}}
		}
		totals = append(totals, bson.E{Key: ns, Value: bson.D{
			entry("total", u.total), entry("readLock", u.readLock), entry("writeLock", u.writeLock),
			entry("queries", u.queries), entry("getmore", u.getmore), entry("insert", u.insert),
			entry("update", u.update), entry("remove", u.remove), entry("commands", u.commands),
		}})
	}
	s.ops.mu.Unlock()
	return marshal(bson.D{{Key: "totals", Value: totals}}), nil
}

// databaseDrop runs drop, the drop of a database, which forgets the
// figures of its collections (CollectionDropped) but, unlike a
// collection's drop, leaves no operation for top to skip: MongoDB's
// Top::collectionDropped sets its last dropped namespace only when
// databaseDropped is false.
func (o *opRegistry) databaseDrop(drop func() error) error {
	o.mu.Lock()
	last := o.lastDropped
	o.mu.Unlock()
	err := drop()
	o.mu.Lock()
	o.lastDropped = last
	o.mu.Unlock()
	return err
}

// CollectionDropped forgets top's figures of db.coll, which left the
// catalog (engine.OnDropped), as MongoDB's Top does: they would otherwise
// pile up with every collection ever made.
func (s *Service) CollectionDropped(db, coll string) {
	o := &s.ops
	o.mu.Lock()
	defer o.mu.Unlock()
	ns := db + "." + coll
	delete(o.top, ns)
	o.lastDropped = ns
}
