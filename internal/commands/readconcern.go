package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/mongoerr"
)

// ReadConcern is a command's parsed readConcern.
type ReadConcern struct {
	// Level is the level given, "" when none (local).
	Level string
	// AfterClusterTime is the causal-consistency point the read must
	// follow; zero when none.
	AfterClusterTime clock.Time
	// AtClusterTime is the point in time a snapshot read reads; zero for
	// the present.
	AtClusterTime clock.Time
}

// readConcernLevels are the levels MongoDB accepts. On one node each is
// honoured by reading committed data: reads see a snapshot of committed
// writes, which is what local, majority, linearizable and available
// promise there, and a transaction reads one snapshot throughout.
var readConcernLevels = map[string]bool{"local": true, "majority": true, "linearizable": true, "available": true, "snapshot": true}

// parseReadConcern reads readConcern as MongoDB's ReadConcernArgs does.
func parseReadConcern(a *GenericArgs, v bson.RawValue) error {
	doc, ok := v.DocumentOK()
	if !ok {
		return mongoerr.New(mongoerr.FailedToParse, "readConcern field should be an object")
	}
	elems, err := doc.Elements()
	if err != nil {
		return mongoerr.New(mongoerr.InvalidBSON, "invalid readConcern: %v", err)
	}
	var rc ReadConcern
	afterGiven, atGiven, opTimeGiven, unsupported := false, false, false, ""
	for _, el := range elems {
		v := el.Value()
		switch key := el.Key(); key {
		case "level":
			if v.Type != bson.TypeString {
				return extractTypeError("level", v, bson.TypeString)
			}
			if !readConcernLevels[v.StringValue()] {
				return mongoerr.New(mongoerr.FailedToParse, "readConcern.level must be either 'local', 'majority', 'linearizable', 'available', or 'snapshot'")
			}
			rc.Level = v.StringValue()
		case "afterClusterTime", "atClusterTime":
			if v.Type != bson.TypeTimestamp {
				return extractTypeError(key, v, bson.TypeTimestamp)
			}
			t, i := v.Timestamp()
			ct := clock.FromTimestamp(bson.Timestamp{T: t, I: i})
			if key == "atClusterTime" {
				rc.AtClusterTime, atGiven = ct, true
			} else {
				rc.AfterClusterTime, afterGiven = ct, true
			}
		case "provenance":
			// parsed by the IDL struct ReadWriteConcernProvenance, under
			// the context name ReadConcernArgs::parse
			if v.Type != bson.TypeString {
				return wrongType("ReadConcernArgs::parse", key, v, "string")
			}
			if !provenances[v.StringValue()] {
				return mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'ReadConcernArgs::parse.provenance' is not a valid value.", v.StringValue())
			}
		case "afterOpTime":
			// An OpTime {ts, t}: checked, and weighed against the other
			// fields, before Folio refuses it.
			op, ok := v.DocumentOK()
			if !ok {
				return extractTypeError(key, v, bson.TypeEmbeddedDocument)
			}
			ts, err := op.LookupErr("ts")
			if err != nil {
				return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"ts\"")
			}
			if ts.Type != bson.TypeTimestamp {
				return extractTypeError("ts", ts, bson.TypeTimestamp)
			}
			opTimeGiven, unsupported = true, key
		case "allowTransactionTableSnapshot", "waitLastStableRecoveryTimestamp":
			// Internal to replication and sharding.
			unsupported = key
		default:
			return mongoerr.New(mongoerr.InvalidOptions, "Unrecognized option in readConcern: %s", key)
		}
	}
	// The combinations, in the order ReadConcernArgs::parse checks them.
	switch {
	case afterGiven && opTimeGiven:
		return mongoerr.New(mongoerr.InvalidOptions, "Can not specify both afterClusterTime and afterOpTime")
	case afterGiven && atGiven:
		return mongoerr.New(mongoerr.InvalidOptions, "Specifying a timestamp for readConcern snapshot in a causally consistent session is not allowed. See https://docs.mongodb.com/manual/core/read-isolation-consistency-recency/#causal-consistency")
	case afterGiven && rc.Level != "" && rc.Level != "local" && rc.Level != "majority" && rc.Level != "snapshot":
		return mongoerr.New(mongoerr.InvalidOptions, "afterClusterTime field can be set only if level is equal to majority, local, or snapshot")
	case opTimeGiven && rc.Level == "snapshot":
		return mongoerr.New(mongoerr.InvalidOptions, "afterOpTime field cannot be set if level is equal to snapshot")
	case atGiven && rc.Level != "snapshot":
		return mongoerr.New(mongoerr.InvalidOptions, "atClusterTime field can be set only if level is equal to snapshot")
	case atGiven && rc.AtClusterTime.Secs() == 0:
		// a timestamp of second 0 is null, as MongoDB's Timestamp::isNull
		return mongoerr.New(mongoerr.InvalidOptions, "atClusterTime cannot be a null timestamp")
	case afterGiven && rc.AfterClusterTime == 0:
		// only Timestamp(0, 0): afterClusterTime may have second 0
		return mongoerr.New(mongoerr.InvalidOptions, "afterClusterTime cannot be a null timestamp")
	}
	if unsupported != "" {
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support readConcern.%s", unsupported)
	}
	a.ReadConcern = rc
	return nil
}

// checkAfterClusterTime honours readConcern.afterClusterTime. A write
// ticks the clock only once it is committed, so every write at or before
// the clock's present is visible to a read starting now: a time no later
// than the present is already reached. A later one was never handed out
// by this node (the client's own $clusterTime has been taken in first),
// which MongoDB refuses.
func (s *Service) checkAfterClusterTime(rc ReadConcern) error {
	if rc.AfterClusterTime == 0 {
		return nil
	}
	if s.ReplSetName == "" {
		return mongoerr.New(mongoerr.IllegalOperation, "Cannot specify afterClusterTime readConcern without replication enabled")
	}
	if now := s.Clock.Now(); rc.AfterClusterTime > now {
		return mongoerr.New(mongoerr.InvalidOptions,
			"readConcern afterClusterTime value must not be greater than the current clusterTime. Requested clusterTime: { ts: %s }; current clusterTime: { ts: %s }",
			rc.AfterClusterTime, now)
	}
	return nil
}

// readConcernAllLevels are the commands that take every read concern level
// outside a transaction (MongoDB 7.0: find, aggregate, distinct, and count
// but for snapshot); any other command takes only local and refuses another
// level before it runs.
// https://www.mongodb.com/docs/v7.0/reference/read-concern/
var readConcernAllLevels = map[string]bool{"find": true, "aggregate": true, "distinct": true, "count": true}

// checkReadConcern refuses a read concern level the command does not
// support (InvalidOptions, outside transactions, whose statements are
// checked with the transaction), then a level a standalone cannot serve:
// linearizable and snapshot need a replica set (NotAReplicaSet). On a
// one-member replica set this node is always the primary that
// linearizable needs.
func (s *Service) checkReadConcern(r *Request, name string) error {
	rc := r.Args.ReadConcern
	if r.Args.Session.inTxn && rc.AtClusterTime != 0 {
		// A time never handed out is refused first, as MongoDB's wait for
		// the read concern refuses it in a transaction too.
		if now := s.Clock.Now(); rc.AtClusterTime > now {
			return atClusterTimeAhead(rc.AtClusterTime, now)
		}
		// A transaction reads the state of its start.
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support readConcern.atClusterTime in a transaction")
	}
	if rc.Level == "" || r.Args.Session.inTxn || rc.Level == "local" && !r.onChangeStream(name) {
		return nil
	}
	if rc.Level == "snapshot" && name == "getMore" {
		// A snapshot session sends its read concern with its getMores;
		// a cursor goes on reading the state it was opened at.
		return nil
	}
	if reason := readConcernUnsupported(r, name, rc.Level); reason != "" {
		return mongoerr.New(mongoerr.InvalidOptions,
			"Command %s does not support { readConcern: { level: \"%s\", provenance: \"clientSupplied\" } } :: caused by :: %s",
			name, rc.Level, reason)
	}
	if s.ReplSetName != "" {
		if rc.Level == "snapshot" {
			return s.pinSnapshot(r)
		}
		return nil
	}
	switch rc.Level {
	case "linearizable":
		return mongoerr.New(mongoerr.NotAReplicaSet, "node needs to be a replica set member to use read concern")
	case "snapshot":
		return mongoerr.New(mongoerr.NotAReplicaSet, "node needs to be a replica set member to use readConcern: snapshot")
	}
	return nil
}

// pinSnapshot finds the state a read at readConcern snapshot outside a
// transaction reads (r.view): the one held for its atClusterTime, or the
// present, held under the time the command started, which its reply
// names. A time not held is one no write came after (the present), or
// history Folio no longer has: SnapshotTooOld, as MongoDB past its
// minSnapshotHistoryWindowInSeconds. A time ahead of the clock was never
// handed out: InvalidOptions, as for afterClusterTime.
func (s *Service) pinSnapshot(r *Request) error {
	at := r.Args.ReadConcern.AtClusterTime
	now := s.Clock.Now()
	switch {
	case at == 0:
		at = r.readTime
		r.view = s.Engine.HoldView(uint64(at))
	case at > now:
		return atClusterTimeAhead(at, now)
	default:
		view, ok := s.Engine.View(uint64(at))
		switch {
		case ok:
			r.view = view
		case at == now:
			r.view = s.Engine.HoldView(uint64(at))
		default:
			return mongoerr.New(mongoerr.SnapshotTooOld,
				"Read timestamp %s is older than the oldest available timestamp.", at)
		}
	}
	r.atClusterTime = at
	return nil
}

// atClusterTimeAhead refuses an atClusterTime later than the clock's
// present, which this node never handed out.
func atClusterTimeAhead(at, now clock.Time) error {
	return mongoerr.New(mongoerr.InvalidOptions,
		"readConcern atClusterTime value must not be greater than the current clusterTime. Requested clusterTime: { ts: %s }; current clusterTime: { ts: %s }",
		at, now)
}

// readConcernUnsupported is why name does not support level (not local)
// outside a transaction, or "" when it does.
func readConcernUnsupported(r *Request, name, level string) string {
	if name == "explain" {
		// explain takes what the command it explains takes, but an
		// aggregate only local.
		inner, _ := r.args.first().DocumentOK()
		if name = Name(inner); name == "aggregate" {
			return "Explain for the aggregate command cannot run with a readConcern other than 'local'. Current readConcern level: " + level
		}
	} else if name == "aggregate" && r.args.spec != nil && r.args.bool("explain") {
		// so does an aggregate with explain: true (LiteParsedPipeline's
		// supportsReadConcern, before its stages')
		return "Explain for the aggregate command cannot run with a readConcern other than 'local'. Current readConcern level: " + level
	}
	localOnly := ""
	if name == "aggregate" && r.args.spec != nil {
		p, _ := r.args.value("pipeline").ArrayOK()
		localOnly = firstLocalOnlyStage(p, true)
	}
	switch {
	case !readConcernAllLevels[name]:
		return "read concern not supported"
	case level != "majority" && r.onChangeStream(name):
		// A change stream reads majority-committed changes: it takes
		// that read concern, or none (which it upgrades to it).
		return "Change stream must use majority read concern"
	case localOnly != "":
		return "Aggregation stage " + localOnly + " cannot run with a readConcern other than 'local'. Current readConcern: " + level
	case name == "count" && level == "snapshot":
		return "read concern snapshot not supported"
	case name == "aggregate" && level == "linearizable" && hasOutputStage(&r.args):
		return "$out or $merge cannot be used with a 'linearizable' read concern level"
	}
	return ""
}
