package commands

import (
	"math"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// The profile command. Each database has a profiling level: 0 records
// nothing, 1 records in its system.profile the operations that take
// slowms or longer, 2 every operation. The slow-operation log covers every
// database at every level. sampleRate is the fraction of operations
// considered for both; a database's filter, when set, replaces slowms and
// sampleRate for its operations: those matching it are logged, and
// profiled at level 1. slowms and sampleRate are the server's.
// https://www.mongodb.com/docs/v7.0/reference/command/profile/

func init() {
	register(profileCmd, &argSpec{path: "profile", fields: []argField{
		arg("slowms", tSafe),
		arg("sampleRate", tSafe),
		arg("filter", tObjectOrUnset),
	}}, "profile")
	authzRules["profile"] = onDatabase("enableProfiler")
}

// tObjectOrUnset is MongoDB's ObjectOrUnset: a document, or "unset".
var tObjectOrUnset = argType{mask: typeMask(bson.TypeEmbeddedDocument, bson.TypeString), want: []string{"object", "string"}}

// DefaultSlowMS is MongoDB's slowms default.
const DefaultSlowMS = 100

// profiling holds the profiler's and the slow-operation log's settings.
type profiling struct {
	// ms is slowms minus DefaultSlowMS, so that the zero Service has
	// MongoDB's default.
	ms atomic.Int64
	// rate is 1 - sampleRate as float64 bits, for the same reason.
	rate atomic.Uint64
	// active counts the databases with settings of their own, and the
	// default when it has a level or a filter, so that an operation looks
	// its database up only when some has.
	active atomic.Int32
	mu     sync.RWMutex
	dbs    map[string]dbProfile
	// def is the settings of the databases without their own
	// (operationProfiling.mode and filter, -profile).
	def dbProfile
}

// dbProfile is one database's profiling settings.
type dbProfile struct {
	level     int32
	filter    *query.Filter
	filterDoc bson.Raw
}

// of returns db's settings.
func (p *profiling) of(db string) dbProfile {
	if p.active.Load() == 0 {
		return dbProfile{}
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if d, ok := p.dbs[db]; ok {
		return d
	}
	return p.def
}

// set replaces db's settings.
func (p *profiling) set(db string, d dbProfile) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dbs == nil {
		p.dbs = map[string]dbProfile{}
	}
	_, had := p.dbs[db]
	if d.level == p.def.level && d.filter == nil && p.def.filter == nil {
		delete(p.dbs, db)
		if had {
			p.active.Add(-1)
		}
		return
	}
	p.dbs[db] = d
	if !had {
		p.active.Add(1)
	}
}

// forget drops db's own settings, as MongoDB's dropDatabase clears them
// (DatabaseHolderImpl::dropDb, clearDatabaseProfileSettings): the
// database, made again, has the default's.
func (p *profiling) forget(db string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, had := p.dbs[db]; had {
		delete(p.dbs, db)
		p.active.Add(-1)
	}
}

// SetProfilingDefaults sets the profiling level (0, 1 or 2) and filter (a
// query on profile entries; nil for none) of the databases the profile
// command did not set, and the sample rate: the server's startup options
// (operationProfiling.mode, filter and slowOpSampleRate).
func (s *Service) SetProfilingDefaults(level int, filter bson.Raw, sampleRate float64) error {
	if err := checkProfileLevel(int64(level), 0); err != nil {
		return err
	}
	if err := checkSampleRate(sampleRate); err != nil {
		return err
	}
	d := dbProfile{level: int32(level)}
	if filter != nil {
		m, err := query.Compile(filter)
		if err != nil {
			return err
		}
		d.filter, d.filterDoc = m, filter
	}
	p := &s.prof
	p.mu.Lock()
	defer p.mu.Unlock()
	if (p.def.level != 0 || p.def.filter != nil) != (d.level != 0 || d.filter != nil) {
		if d.level != 0 || d.filter != nil {
			p.active.Add(1)
		} else {
			p.active.Add(-1)
		}
	}
	p.def = d
	p.rate.Store(math.Float64bits(1 - sampleRate))
	return nil
}

// SlowMS is the slow-operation threshold in milliseconds.
func (s *Service) SlowMS() int64 { return s.prof.ms.Load() + DefaultSlowMS }

// SetSlowMS sets the slow-operation threshold (-slowms, profile's slowms).
func (s *Service) SetSlowMS(ms int64) { s.prof.ms.Store(ms - DefaultSlowMS) }

// sampleRate is the fraction of operations the profiler and the slow log
// consider.
func (s *Service) sampleRate() float64 { return 1 - math.Float64frombits(s.prof.rate.Load()) }

// checkProfileLevel accepts the profiling levels from least (-1 for the
// command's read-only form, 0 at startup) to 2.
func checkProfileLevel(level, least int64) error {
	if level < least || level > 2 {
		return mongoerr.New(mongoerr.BadValue, "Invalid profiling level: %d", level)
	}
	return nil
}

// checkSampleRate accepts a sampleRate from 0 to 1.
func checkSampleRate(rate float64) error {
	if rate < 0 || rate > 1 {
		return mongoerr.New(mongoerr.BadValue, "'sampleRate' must be between 0.0 and 1.0 inclusive")
	}
	return nil
}

// profileFilterNote is the note MongoDB's profile answers when it sets or
// unsets a filter.
const profileFilterNote = "When a filter expression is set, slowms and sampleRate are not used for profiling and slow-query log lines."

// profileCmd reads and sets the database's profiling level and filter and
// the server's slowms and sampleRate: {profile: -1 (read only) | 0 | 1 |
// 2, slowms, sampleRate, filter: <query> | "unset"}. It answers the
// settings before the change.
func profileCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.first()
	level, ok := v.AsInt64OK()
	if !ok {
		return nil, wrongType("profile", "profile", v, "int")
	}
	if err := checkProfileLevel(level, -1); err != nil {
		return nil, err
	}
	prev := s.prof.of(r.DB)
	reply := bson.D{{Key: "was", Value: prev.level}, {Key: "slowms", Value: int32(s.SlowMS())}, {Key: "sampleRate", Value: s.sampleRate()}}
	if prev.filterDoc != nil {
		reply = append(reply, bson.E{Key: "filter", Value: prev.filterDoc})
	}
	next := prev
	if r.args.has("filter") {
		f := r.args.value("filter")
		switch {
		case f.Type == bson.TypeString && f.StringValue() == "unset":
			next.filter, next.filterDoc = nil, nil
		case f.Type == bson.TypeString:
			return nil, mongoerr.New(mongoerr.BadValue, "'unset' is the only expected string value for 'filter'")
		default:
			doc := bson.Raw(append([]byte(nil), f.Value...))
			m, err := query.Compile(doc)
			if err != nil {
				return nil, err
			}
			next.filter, next.filterDoc = m, doc
		}
		reply = append(reply, bson.E{Key: "note", Value: profileFilterNote})
	}
	if level >= 0 {
		next.level = int32(level)
	}
	hasRate := r.args.has("sampleRate")
	rate, _ := r.args.value("sampleRate").AsFloat64OK()
	if hasRate {
		if err := checkSampleRate(rate); err != nil {
			return nil, err
		}
	}
	if next.level > 0 && (next.level != prev.level || r.args.has("filter")) {
		// Settings that profile need the database's capped
		// system.profile, made now (MongoDB's _setProfileSettings); an
		// uncapped one fails the command, which then changes nothing.
		if err := s.Engine.CreateProfileCollection(r.DB); err != nil {
			return nil, err
		}
	}
	if hasRate {
		s.prof.rate.Store(math.Float64bits(1 - rate))
	}
	if r.args.has("slowms") {
		s.SetSlowMS(r.args.safeInt("slowms"))
	}
	s.prof.set(r.DB, next)
	return marshal(reply), nil
}
