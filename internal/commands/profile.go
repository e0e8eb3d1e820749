package commands

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// The slow-operation log and the profile command. A command that takes
// slowms or longer is logged as MongoDB logs it ("Slow query", with its
// namespace, command, duration and reply length), for a sampleRate
// fraction of them. Profiling into system.profile (levels 1 and 2) is not
// implemented and is refused.
// https://www.mongodb.com/docs/v7.0/reference/command/profile/

func init() {
	register(profileCmd, &argSpec{path: "profile", fields: []argField{
		arg("slowms", tSafe),
		arg("sampleRate", tSafe),
		refuse("filter", tDoc, "profiler filters"),
	}}, "profile")
	authzRules["profile"] = onDatabase("enableProfiler")
}

// DefaultSlowMS is MongoDB's slowms default.
const DefaultSlowMS = 100

// slowLog is the slow-operation log's settings.
type slowLog struct {
	// ms is slowms minus DefaultSlowMS, so that the zero Service has
	// MongoDB's default.
	ms atomic.Int64
	// rate is 1 - sampleRate as float64 bits, for the same reason.
	rate atomic.Uint64
}

// SlowMS is the slow-operation threshold in milliseconds.
func (s *Service) SlowMS() int64 { return s.slow.ms.Load() + DefaultSlowMS }

// SetSlowMS sets the slow-operation threshold (-slowms, profile's slowms).
func (s *Service) SetSlowMS(ms int64) { s.slow.ms.Store(ms - DefaultSlowMS) }

// sampleRate is the fraction of slow operations logged.
func (s *Service) sampleRate() float64 { return 1 - math.Float64frombits(s.slow.rate.Load()) }

// logIfSlow logs r as a slow operation when it took slowms or more.
func (s *Service) logIfSlow(r *Request, name string, d time.Duration, reply bson.Raw, err error) {
	ms := d.Milliseconds()
	if s.Log == nil || ms < s.SlowMS() || (s.sampleRate() < 1 && rand.Float64() >= s.sampleRate()) {
		return
	}
	ns := r.DB + ".$cmd"
	if coll, ok := r.args.first().StringValueOK(); ok && coll != "" {
		ns = r.DB + "." + coll
	}
	attrs := []any{"type", "command", "ns", ns, "command", name, "commandDocument", r.Cmd.String(),
		"durationMillis", ms, "reslen", len(reply)}
	if r.Conn != nil {
		attrs = append(attrs, "remote", r.Conn.Remote)
	}
	if err != nil {
		e := mongoerr.As(err)
		attrs = append(attrs, "ok", 0, "errCode", int32(e.Code), "errName", e.Code.Name())
	}
	s.Log.Info("Slow query", attrs...)
}

// profileCmd reads and sets the profiling level and the slow-operation
// settings: {profile: -1 | 0, slowms, sampleRate}. It answers the level,
// slowms and sampleRate before the change.
func profileCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.first()
	level, ok := v.AsInt64OK()
	if !ok {
		return nil, wrongType("profile", "profile", v, "int")
	}
	switch level {
	case -1, 0:
	case 1, 2:
		return nil, mongoerr.New(mongoerr.NotImplemented, "profiling level %d (recording operations in system.profile) is not supported by Folio; slow operations are logged at level 0", level)
	default:
		return nil, mongoerr.New(mongoerr.BadValue, "Invalid profiling level: %d", level)
	}
	reply := marshal(bson.D{{Key: "was", Value: int32(0)}, {Key: "slowms", Value: int32(s.SlowMS())}, {Key: "sampleRate", Value: s.sampleRate()}})
	if r.args.has("sampleRate") {
		rate, _ := r.args.value("sampleRate").AsFloat64OK()
		if rate < 0 || rate > 1 {
			return nil, mongoerr.New(mongoerr.BadValue, "'sampleRate' must be between 0.0 and 1.0 inclusive")
		}
		s.slow.rate.Store(math.Float64bits(1 - rate))
	}
	if r.args.has("slowms") {
		s.SetSlowMS(r.args.safeInt("slowms"))
	}
	return reply, nil
}
