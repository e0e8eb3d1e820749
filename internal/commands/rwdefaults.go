package commands

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// Cluster-wide read and write concern defaults, as MongoDB 7.0 keeps them
// on a replica set: setDefaultRWConcern stores them in config.settings;
// a write command sent without a write concern takes the default one (the
// implicit default, unless one was set, is w: "majority", which on one
// node waits for the journal). Every read concern a default may name
// (local, majority, available) reads the same committed data on one node,
// so the default read concern is stored and reported.
// https://www.mongodb.com/docs/v7.0/reference/mongodb-defaults/

func init() {
	registerAdmin(getDefaultRWConcernCmd, getDefaultRWConcernSpec, "getDefaultRWConcern")
	registerAdmin(setDefaultRWConcernCmd, setDefaultRWConcernSpec, "setDefaultRWConcern")
	authzRules["getDefaultRWConcern"] = onCluster("getDefaultRWConcern")
	authzRules["setDefaultRWConcern"] = onCluster("setDefaultRWConcern")
}

// getDefaultRWConcernSpec declares getDefaultRWConcern's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/getDefaultRWConcern/
var getDefaultRWConcernSpec = &argSpec{path: "getDefaultRWConcern", fields: []argField{
	arg("inMemory", tStrictBool),
}}

// setDefaultRWConcernSpec declares setDefaultRWConcern's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/setDefaultRWConcern/
var setDefaultRWConcernSpec = &argSpec{path: "setDefaultRWConcern", fields: []argField{
	arg("defaultReadConcern", tDoc),
	arg("defaultWriteConcern", tDoc),
}}

const (
	// configSettings and rwDefaultsID name the document holding the
	// defaults, as MongoDB names it.
	configSettings = "settings"
	rwDefaultsID   = "ReadWriteConcernDefaults"
	// rwDefaultsRefresh is how long a frontend of a shared store uses
	// the defaults it read before it reads them again (another frontend
	// may have set them); a sole writer reads them once.
	rwDefaultsRefresh = 30 * time.Second
)

// rwDefaults are the defaults setDefaultRWConcern stored (nil documents:
// none set) and when this node read them.
type rwDefaults struct {
	readConcern, writeConcern bson.Raw
	// wc is writeConcern parsed.
	wc WriteConcern
	// updated is whether a default was ever set, at updateOpTime and
	// updateWall.
	updated      bool
	updateOpTime bson.Timestamp
	updateWall   bson.DateTime
	// loaded is when this node read them (localUpdateWallClockTime).
	loaded time.Time
}

// rwDefaultsCache is a Service's copy of the defaults; mu serializes
// their reads from the store and their changes.
type rwDefaultsCache struct {
	mu  sync.Mutex
	cur atomic.Pointer[rwDefaults]
}

// current is the copy, unless there is none or, on a shared store, it is
// older than rwDefaultsRefresh.
func (c *rwDefaultsCache) current(sole bool) *rwDefaults {
	d := c.cur.Load()
	if d == nil || !sole && time.Since(d.loaded) >= rwDefaultsRefresh {
		return nil
	}
	return d
}

// rwDefaults returns the defaults: the copy, or, when there is none to use
// or fresh is set, those read from the store (a failed read keeps a copy
// there is).
func (s *Service) rwDefaults(fresh bool) (*rwDefaults, error) {
	c := &s.rwDefaultsCache
	if d := c.current(s.Engine.SoleWriter()); d != nil && !fresh {
		return d, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.current(s.Engine.SoleWriter()); d != nil && !fresh {
		return d, nil
	}
	d, err := s.loadRWDefaults()
	if err != nil {
		if d := c.cur.Load(); d != nil {
			return d, nil
		}
		return nil, err
	}
	c.cur.Store(d)
	return d, nil
}

// loadRWDefaults reads the defaults document.
func (s *Service) loadRWDefaults() (*rwDefaults, error) {
	d := &rwDefaults{loaded: time.Now()}
	cur, err := s.Engine.Find(configDB, configSettings, engine.FindOptions{Filter: marshal(bson.D{{Key: "_id", Value: rwDefaultsID}}), Limit: 1})
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	doc, err := cur.Next()
	if err != nil || doc == nil {
		return d, err
	}
	if v, ok := doc.Lookup("defaultReadConcern").DocumentOK(); ok {
		d.readConcern = append(bson.Raw(nil), v...)
	}
	if v, ok := doc.Lookup("defaultWriteConcern").DocumentOK(); ok {
		var a GenericArgs
		if err := parseWriteConcern(&a, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: v}); err != nil {
			return nil, err
		}
		d.writeConcern, d.wc = append(bson.Raw(nil), v...), a.WriteConcern
	}
	if t, i, ok := doc.Lookup("updateOpTime").TimestampOK(); ok {
		d.updated, d.updateOpTime = true, bson.Timestamp{T: t, I: i}
	}
	if dt, ok := doc.Lookup("updateWallClockTime").DateTimeOK(); ok {
		d.updateWall = bson.DateTime(dt)
	}
	return d, nil
}

// implicitWriteConcern is MongoDB's implicit default write concern on a
// replica set without arbiters.
var implicitWriteConcern = WriteConcern{WMode: "majority", IsMode: true, Provenance: "implicitDefault"}

// defaultWriteConcern is the write concern of a write command sent
// without one: the default set, else the implicit one.
func (s *Service) defaultWriteConcern() (WriteConcern, error) {
	d, err := s.rwDefaults(false)
	if err != nil || d.writeConcern == nil {
		return implicitWriteConcern, err
	}
	wc := d.wc
	wc.Given, wc.Provenance = false, "customDefault"
	return wc, nil
}

// rwDefaultsReply is getDefaultRWConcern's and setDefaultRWConcern's
// reply, in the order of MongoDB's GetDefaultRWConcernResponse.
func rwDefaultsReply(d *rwDefaults, inMemory bool) bson.Raw {
	rc, rcSource := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d.readConcern}, "global"
	if d.readConcern == nil {
		rc, rcSource = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: marshal(bson.D{{Key: "level", Value: "local"}})}, "implicit"
	}
	wc, wcSource := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d.writeConcern}, "global"
	if d.writeConcern == nil {
		wc, wcSource = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: writeConcernDoc(implicitWriteConcern)}, "implicit"
	}
	out := bson.D{{Key: "defaultReadConcern", Value: rc}, {Key: "defaultWriteConcern", Value: wc}}
	if d.updated {
		out = append(out, bson.E{Key: "updateOpTime", Value: d.updateOpTime}, bson.E{Key: "updateWallClockTime", Value: d.updateWall})
	}
	out = append(out, bson.E{Key: "defaultWriteConcernSource", Value: wcSource}, bson.E{Key: "defaultReadConcernSource", Value: rcSource})
	if inMemory {
		out = append(out, bson.E{Key: "inMemory", Value: true})
	}
	return marshal(append(out, bson.E{Key: "localUpdateWallClockTime", Value: bson.NewDateTimeFromTime(d.loaded)}))
}

// writeConcernDoc is wc as MongoDB serializes a default: w, then j or
// fsync when given, then wtimeout.
func writeConcernDoc(wc WriteConcern) bson.Raw {
	var d bson.D
	if wc.IsMode {
		d = append(d, bson.E{Key: "w", Value: wc.WMode})
	} else {
		d = append(d, bson.E{Key: "w", Value: int32(wc.W)})
	}
	switch {
	case wc.FSync:
		d = append(d, bson.E{Key: "fsync", Value: true})
	case wc.HasJ:
		d = append(d, bson.E{Key: "j", Value: wc.J})
	}
	return marshal(append(d, bson.E{Key: "wtimeout", Value: int32(wc.WTimeout)}))
}

// rwDefaultsOnReplSet refuses the commands on a standalone.
func (s *Service) rwDefaultsOnReplSet(name string) error {
	if s.ReplSetName == "" {
		return mongoerr.New(mongoerr.RWDefaultsOnStandalone, "'%s' is not supported on standalone nodes.", name)
	}
	return nil
}

func getDefaultRWConcernCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.rwDefaultsOnReplSet("getDefaultRWConcern"); err != nil {
		return nil, err
	}
	inMemory := r.args.bool("inMemory")
	d, err := s.rwDefaults(!inMemory)
	if err != nil {
		return nil, err
	}
	return rwDefaultsReply(d, inMemory), nil
}

// setDefaultRWConcernCmd checks the new defaults as MongoDB's
// ReadWriteConcernDefaults does, keeps the one not given, and stores them.
func setDefaultRWConcernCmd(s *Service, r *Request) (bson.Raw, error) {
	if err := s.rwDefaultsOnReplSet("setDefaultRWConcern"); err != nil {
		return nil, err
	}
	rcArg, wcArg := r.args.doc("defaultReadConcern"), r.args.doc("defaultWriteConcern")
	if rcArg == nil && wcArg == nil {
		return nil, mongoerr.New(mongoerr.BadValue, `At least one of the "defaultReadConcern" or "defaultWriteConcern" fields must be present`)
	}
	s.rwDefaultsCache.mu.Lock()
	defer s.rwDefaultsCache.mu.Unlock()
	cur, err := s.loadRWDefaults()
	if err != nil {
		return nil, err
	}
	next := &rwDefaults{readConcern: cur.readConcern, writeConcern: cur.writeConcern, wc: cur.wc, updated: true}
	if rcArg != nil {
		if next.readConcern, err = defaultReadConcernArg(rcArg); err != nil {
			return nil, err
		}
	}
	if wcArg != nil {
		wc, doc, err := defaultWriteConcernArg(wcArg)
		if err != nil {
			return nil, err
		}
		if doc == nil && cur.writeConcern != nil {
			return nil, mongoerr.New(mongoerr.IllegalOperation, "The global default write concern cannot be unset once it is set.")
		}
		next.wc, next.writeConcern = wc, doc
	}
	next.updateOpTime = s.Clock.Now().Timestamp()
	next.updateWall = bson.NewDateTimeFromTime(time.Now())
	doc := bson.D{{Key: "_id", Value: rwDefaultsID}}
	if next.readConcern != nil {
		doc = append(doc, bson.E{Key: "defaultReadConcern", Value: next.readConcern})
	}
	if next.writeConcern != nil {
		doc = append(doc, bson.E{Key: "defaultWriteConcern", Value: next.writeConcern})
	}
	doc = append(doc, bson.E{Key: "updateOpTime", Value: next.updateOpTime}, bson.E{Key: "updateWallClockTime", Value: next.updateWall})
	if _, err := s.Engine.Update(configDB, configSettings, engine.UpdateSpec{
		Filter:       marshal(bson.D{{Key: "_id", Value: rwDefaultsID}}),
		Update:       marshal(doc),
		Upsert:       true,
		WriteOptions: engine.WriteOptions{Journal: true, Ctx: r.Ctx},
	}); err != nil {
		return nil, err
	}
	next.loaded = time.Now()
	s.rwDefaultsCache.cur.Store(next)
	return rwDefaultsReply(next, false), nil
}

// defaultReadConcernArg checks a new default read concern: a readConcern
// whose level is not snapshot or linearizable, without a time or a
// provenance; nil unsets it (an empty document).
func defaultReadConcernArg(doc bson.Raw) (bson.Raw, error) {
	// The level is parsed as any read concern's; the fields a default
	// may not hold are refused in MongoDB's order, after it.
	unsuitable := []string{"afterOpTime", "afterClusterTime", "atClusterTime", "provenance"}
	elems, _ := doc.Elements()
	level := bson.D{}
	held := map[string]bool{}
	for _, el := range elems {
		if slices.Contains(unsuitable, el.Key()) {
			held[el.Key()] = true
		} else {
			level = append(level, bson.E{Key: el.Key(), Value: el.Value()})
		}
	}
	var a GenericArgs
	if err := parseReadConcern(&a, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: marshal(level)}); err != nil {
		return nil, err
	}
	if lvl := a.ReadConcern.Level; lvl == "snapshot" || lvl == "linearizable" {
		return nil, mongoerr.New(mongoerr.BadValue, "level: '%s' is not suitable for the default read concern", lvl)
	}
	for _, key := range unsuitable {
		switch {
		case held[key] && key == "provenance":
			return nil, mongoerr.New(mongoerr.BadValue, "'provenance' must be unset in default read concern")
		case held[key]:
			return nil, mongoerr.New(mongoerr.BadValue, "'%s' is not suitable for the default read concern", key)
		}
	}
	if a.ReadConcern.Level == "" {
		return nil, nil
	}
	return marshal(bson.D{{Key: "level", Value: a.ReadConcern.Level}}), nil
}

// defaultWriteConcernArg checks a new default write concern: an
// acknowledged writeConcern without a provenance that this one-member
// replica set can satisfy; a nil document unsets it (an empty one).
func defaultWriteConcernArg(doc bson.Raw) (WriteConcern, bson.Raw, error) {
	var a GenericArgs
	if err := parseWriteConcern(&a, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}); err != nil {
		return WriteConcern{}, nil, err
	}
	wc := a.WriteConcern
	if !wc.Given {
		return wc, nil, nil
	}
	if !wc.IsMode && wc.W < 1 {
		return wc, nil, mongoerr.New(mongoerr.BadValue, "Unacknowledged write concern is not suitable for the default write concern")
	}
	if doc.Lookup("provenance").Type != 0 {
		return wc, nil, mongoerr.New(mongoerr.BadValue, "'provenance' must be unset in default write concern")
	}
	if err := wc.replSetError(); err != nil {
		return wc, nil, err
	}
	return wc, writeConcernDoc(wc), nil
}
