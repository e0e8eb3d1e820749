package commands

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/sessions"
)

// newReplSetService is a test Service reporting itself as a one-member
// replica set, whose clock starts at wall.
func newReplSetService(t *testing.T, wall time.Time) *Service {
	s, _ := newServiceWithClock(t, clock.New(func() time.Time { return wall }))
	s.ReplSetName = "folio"
	s.Sessions = sessions.NewRegistry()
	return s
}

// runCmd runs cmd on db test and decodes the reply.
func runCmd(t *testing.T, s *Service, cmd bson.D) bson.Raw {
	t.Helper()
	return runCmdOn(t, s, "test", cmd)
}

// runCmdOn runs cmd on db and decodes the reply.
func runCmdOn(t *testing.T, s *Service, db string, cmd bson.D) bson.Raw {
	t.Helper()
	raw, err := bson.Marshal(append(cmd, bson.E{Key: "$db", Value: db}))
	if err != nil {
		t.Fatal(err)
	}
	return s.Run(&Request{DB: db, Cmd: raw, Conn: &Conn{}})
}

func code(reply bson.Raw) int32 {
	c, _ := reply.Lookup("code").Int32OK()
	return c
}

// TestGenericArguments has one row per generic argument and write concern
// variant: honoured (ok), validated (MongoDB's code) or refused (238).
// https://www.mongodb.com/docs/v7.0/reference/command/ (generic fields),
// https://www.mongodb.com/docs/v7.0/reference/write-concern/,
// https://www.mongodb.com/docs/v7.0/reference/read-concern/,
// https://www.mongodb.com/docs/v7.0/reference/stable-api/.
func TestGenericArguments(t *testing.T) {
	wall := time.Unix(1_700_000_000, 0)
	// now is the present of a fresh service, whose store's opening may
	// have ticked the clock.
	now := newReplSetService(t, wall).Clock.Now().Timestamp()
	future := bson.Timestamp{T: uint32(wall.Unix()) + 100, I: 1}
	farFuture := bson.Timestamp{T: uint32(time.Now().Unix()) + 2*maxClockDriftSecs, I: 1} // against the real wall clock
	sig := bson.D{{Key: "hash", Value: bson.Binary{Data: make([]byte, 20)}}, {Key: "keyId", Value: int64(0)}}
	ping := bson.D{{Key: "ping", Value: 1}}
	find := bson.D{{Key: "find", Value: "c"}}
	insert := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}
	with := func(cmd bson.D, key string, v any) bson.D {
		return append(append(bson.D{}, cmd...), bson.E{Key: key, Value: v})
	}
	wc := func(d bson.D) bson.D { return with(insert, "writeConcern", d) }
	rc := func(d bson.D) bson.D { return with(find, "readConcern", d) }
	ct := func(v any) bson.D { return with(ping, "$clusterTime", v) }
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: make([]byte, 16)}}}
	opTime := bson.D{{Key: "ts", Value: bson.Timestamp{T: 1, I: 1}}, {Key: "t", Value: int64(1)}}

	tests := []struct {
		name string
		cmd  bson.D
		code int32  // 0: ok
		wce  int32  // writeConcernError code expected on an ok reply
		msg  string // in the errmsg, when given
	}{
		// Sessions.
		{name: "lsid", cmd: with(ping, "lsid", lsid)},
		{name: "lsid not an object", cmd: with(ping, "lsid", 1), code: 14},
		{name: "txnNumber without lsid", cmd: with(insert, "txnNumber", int64(1)), code: 72},
		{name: "txnNumber not a long", cmd: with(with(insert, "lsid", lsid), "txnNumber", 1), code: 14},
		{name: "autocommit true", cmd: with(with(with(insert, "lsid", lsid), "txnNumber", int64(1)), "autocommit", true), code: 72},
		{name: "startTransaction without autocommit", cmd: with(with(with(insert, "lsid", lsid), "txnNumber", int64(1)), "startTransaction", true), code: 72},
		// txnRetryCounter: only a sharded cluster's members take it
		// (InvalidOptions on a replica set: jstests/sharding/
		// internal_txns/retry_on_transient_error_validation.js); with a
		// txnNumber it is checked as initializeOperationSessionInfo does.
		{name: "a transaction's first statement", cmd: with(with(with(with(insert, "lsid", lsid), "txnNumber", int64(1)), "autocommit", false), "startTransaction", true), code: 0},
		{name: "txnRetryCounter on a transaction's first statement", cmd: with(with(with(with(with(insert, "lsid", lsid), "txnNumber", int64(1)), "autocommit", false), "startTransaction", true), "txnRetryCounter", int32(0)), code: 72},
		{name: "txnRetryCounter on a retryable write", cmd: with(with(with(insert, "lsid", lsid), "txnNumber", int64(1)), "txnRetryCounter", int32(0)), code: 72},
		{name: "txnRetryCounter negative", cmd: with(with(with(with(with(insert, "lsid", lsid), "txnNumber", int64(1)), "autocommit", false), "startTransaction", true), "txnRetryCounter", int32(-1)), code: 72},
		{name: "txnRetryCounter not an int", cmd: with(with(with(with(with(insert, "lsid", lsid), "txnNumber", int64(1)), "autocommit", false), "startTransaction", true), "txnRetryCounter", int64(0)), code: 14},
		{name: "stmtId", cmd: with(insert, "stmtId", int32(0))},
		{name: "stmtId of an insert a string", cmd: with(insert, "stmtId", "0"), code: 14},
		// stmtId: any value where the command does not declare it.
		{name: "stmtId on find", cmd: with(find, "stmtId", int32(0))},
		{name: "stmtId on ping", cmd: with(ping, "stmtId", "x")},
		{name: "stmtId on aggregate", cmd: with(bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}}, "stmtId", int32(1))},
		// comment: any value.
		{name: "comment string", cmd: with(find, "comment", "hi")},
		{name: "comment document", cmd: with(find, "comment", bson.D{{Key: "a", Value: 1}})},
		// maxTimeMS.
		{name: "maxTimeMS", cmd: with(find, "maxTimeMS", 1000)},
		{name: "maxTimeMS 0", cmd: with(insert, "maxTimeMS", int64(0))},
		{name: "maxTimeMS integral double", cmd: with(find, "maxTimeMS", 10.0)},
		{name: "maxTimeMS string", cmd: with(find, "maxTimeMS", "1"), code: 2},
		{name: "maxTimeMS null", cmd: with(find, "maxTimeMS", nil), code: 2},
		{name: "maxTimeMS negative", cmd: with(find, "maxTimeMS", -1), code: 2},
		{name: "maxTimeMS too large", cmd: with(find, "maxTimeMS", int64(1)<<31), code: 2},
		{name: "maxTimeMS fractional", cmd: with(find, "maxTimeMS", 1.5), code: 2},
		// readConcern.
		{name: "readConcern majority", cmd: rc(bson.D{{Key: "level", Value: "majority"}})},
		{name: "readConcern snapshot", cmd: rc(bson.D{{Key: "level", Value: "snapshot"}})},
		{name: "readConcern not an object", cmd: with(find, "readConcern", "local"), code: 9},
		{name: "readConcern bad level", cmd: rc(bson.D{{Key: "level", Value: "bogus"}}), code: 9},
		{name: "readConcern level not a string", cmd: rc(bson.D{{Key: "level", Value: 1}}), code: 14},
		{name: "readConcern unknown field", cmd: rc(bson.D{{Key: "foo", Value: 1}}), code: 72},
		{name: "afterClusterTime reached", cmd: rc(bson.D{{Key: "afterClusterTime", Value: now}})},
		{name: "afterClusterTime ahead", cmd: rc(bson.D{{Key: "afterClusterTime", Value: future}}), code: 72},
		{name: "afterClusterTime not a timestamp", cmd: rc(bson.D{{Key: "afterClusterTime", Value: 1}}), code: 14},
		{name: "afterClusterTime null", cmd: rc(bson.D{{Key: "afterClusterTime", Value: bson.Timestamp{}}}), code: 72},
		{name: "afterClusterTime linearizable", cmd: rc(bson.D{{Key: "level", Value: "linearizable"}, {Key: "afterClusterTime", Value: now}}), code: 72},
		{name: "atClusterTime at the present", cmd: rc(bson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: now}})},
		{name: "atClusterTime not a timestamp", cmd: rc(bson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: int64(5)}}), code: 14},
		{name: "atClusterTime without snapshot", cmd: rc(bson.D{{Key: "atClusterTime", Value: now}}), code: 72},
		{name: "atClusterTime null", cmd: rc(bson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: bson.Timestamp{}}}), code: 72},
		{name: "atClusterTime of second 0", cmd: rc(bson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: bson.Timestamp{I: 1}}}), code: 72},
		// ReadConcernArgs::parse refuses only Timestamp(0, 0) for afterClusterTime.
		{name: "afterClusterTime of second 0", cmd: rc(bson.D{{Key: "afterClusterTime", Value: bson.Timestamp{I: 1}}})},
		{name: "atClusterTime and afterClusterTime", cmd: rc(bson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: now}, {Key: "afterClusterTime", Value: now}}), code: 72,
			msg: "Specifying a timestamp for readConcern snapshot in a causally consistent session is not allowed"},
		{name: "afterOpTime", cmd: rc(bson.D{{Key: "afterOpTime", Value: opTime}}), code: 238},
		{name: "afterOpTime not an object", cmd: rc(bson.D{{Key: "afterOpTime", Value: 1}}), code: 14},
		{name: "afterOpTime without ts", cmd: rc(bson.D{{Key: "afterOpTime", Value: bson.D{}}}), code: 4},
		{name: "afterOpTime and afterClusterTime", cmd: rc(bson.D{{Key: "afterOpTime", Value: opTime}, {Key: "afterClusterTime", Value: now}}), code: 72},
		{name: "afterOpTime at snapshot", cmd: rc(bson.D{{Key: "level", Value: "snapshot"}, {Key: "afterOpTime", Value: opTime}}), code: 72},
		{name: "readConcern provenance", cmd: rc(bson.D{{Key: "level", Value: "local"}, {Key: "provenance", Value: "implicitDefault"}})},
		{name: "readConcern bad provenance", cmd: rc(bson.D{{Key: "provenance", Value: "x"}}), code: 2,
			msg: "Enumeration value 'x' for field 'ReadConcernArgs::parse.provenance' is not a valid value."},
		{name: "readConcern provenance not a string", cmd: rc(bson.D{{Key: "provenance", Value: 1}}), code: 14},
		// writeConcern.
		{name: "w 1", cmd: wc(bson.D{{Key: "w", Value: 1}})},
		{name: "w majority", cmd: wc(bson.D{{Key: "w", Value: "majority"}})},
		{name: "empty writeConcern", cmd: wc(bson.D{})},
		{name: "j 1", cmd: wc(bson.D{{Key: "j", Value: 1}})},
		{name: "j true", cmd: wc(bson.D{{Key: "j", Value: true}})},
		{name: "fsync", cmd: wc(bson.D{{Key: "fsync", Value: true}})},
		{name: "wtimeout", cmd: wc(bson.D{{Key: "w", Value: "majority"}, {Key: "wtimeout", Value: 100}})},
		{name: "wtimeout string is 0", cmd: wc(bson.D{{Key: "wtimeout", Value: "x"}})},
		{name: "w 2", cmd: wc(bson.D{{Key: "w", Value: 2}}), wce: 100},
		{name: "w 50", cmd: wc(bson.D{{Key: "w", Value: int64(50)}}), wce: 100},
		{name: "w tag", cmd: wc(bson.D{{Key: "w", Value: "tagX"}}), wce: 79},
		{name: "w true", cmd: wc(bson.D{{Key: "w", Value: true}}), code: 9},
		{name: "w negative", cmd: wc(bson.D{{Key: "w", Value: -1}}), code: 9},
		{name: "w 51", cmd: wc(bson.D{{Key: "w", Value: 51}}), code: 9},
		{name: "w tag set", cmd: wc(bson.D{{Key: "w", Value: bson.D{{Key: "dc", Value: 1}}}}), code: 238},
		{name: "w tag set with a string", cmd: wc(bson.D{{Key: "w", Value: bson.D{{Key: "dc", Value: 1}, {Key: "rack", Value: "x"}}}}), code: 9,
			msg: `tags must be a single level document with only number values; found: rack: "x"`},
		{name: "w tag set nested", cmd: wc(bson.D{{Key: "w", Value: bson.D{{Key: "dc", Value: bson.D{{Key: "a", Value: 1}}}}}}), code: 9},
		{name: "j string", cmd: wc(bson.D{{Key: "j", Value: "x"}}), code: 14},
		{name: "j and fsync", cmd: wc(bson.D{{Key: "j", Value: true}, {Key: "fsync", Value: true}}), code: 9},
		{name: "writeConcern unknown field", cmd: wc(bson.D{{Key: "foo", Value: 1}}), code: 40415},
		{name: "writeConcern provenance", cmd: wc(bson.D{{Key: "w", Value: 1}, {Key: "provenance", Value: "clientSupplied"}})},
		{name: "writeConcern bad provenance", cmd: wc(bson.D{{Key: "provenance", Value: "x"}}), code: 2},
		{name: "writeConcern not an object", cmd: with(insert, "writeConcern", 1), code: 14},
		{name: "writeConcern on a read", cmd: with(find, "writeConcern", bson.D{{Key: "w", Value: 1}}), code: 72},
		{name: "writeConcern on create", cmd: bson.D{{Key: "create", Value: "wc"}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 3}}}}, wce: 100},
		{name: "writeConcern on aggregate $out", cmd: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "o"}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}}}}, wce: 100},
		{name: "writeConcern on drop", cmd: bson.D{{Key: "drop", Value: "c"}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: "x"}}}}, wce: 79},
		{name: "writeConcern on dropDatabase", cmd: bson.D{{Key: "dropDatabase", Value: 1}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}}}}, wce: 100},
		{name: "writeConcern on update", cmd: bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}, {Key: "upsert", Value: true}}}}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}}}}, wce: 100},
		{name: "writeConcern on delete", cmd: bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}}}}, wce: 100},
		{name: "writeConcern on findAndModify", cmd: bson.D{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}, {Key: "upsert", Value: true}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}}}}, wce: 100},
		{name: "writeConcern on createIndexes", cmd: bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}}}}, wce: 100},
		{name: "writeConcern on ping", cmd: with(ping, "writeConcern", bson.D{{Key: "w", Value: 1}}), code: 72},
		// $readPreference.
		{name: "$readPreference secondaryPreferred", cmd: with(find, "$readPreference", bson.D{{Key: "mode", Value: "secondaryPreferred"}})},
		{name: "$readPreference not an object", cmd: with(find, "$readPreference", "primary"), code: 14},
		{name: "$readPreference bad mode", cmd: with(find, "$readPreference", bson.D{{Key: "mode", Value: "x"}}), code: 2},
		{name: "$readPreference without mode", cmd: with(find, "$readPreference", bson.D{}), code: 40414},
		{name: "readPreference is not generic", cmd: with(find, "readPreference", bson.D{{Key: "mode", Value: "primary"}}), code: 40415},
		// $clusterTime.
		{name: "$clusterTime", cmd: ct(bson.D{{Key: "clusterTime", Value: now}, {Key: "signature", Value: sig}})},
		{name: "$clusterTime not an object", cmd: ct(1), code: 10065},
		{name: "$clusterTime without clusterTime", cmd: ct(bson.D{{Key: "signature", Value: sig}}), code: 4},
		{name: "$clusterTime clusterTime not a timestamp", cmd: ct(bson.D{{Key: "clusterTime", Value: 1}, {Key: "signature", Value: sig}}), code: 14},
		{name: "$clusterTime without signature", cmd: ct(bson.D{{Key: "clusterTime", Value: now}}), code: 4},
		{name: "$clusterTime keyId not a number", cmd: ct(bson.D{{Key: "clusterTime", Value: now}, {Key: "signature", Value: bson.D{{Key: "hash", Value: bson.Binary{Data: make([]byte, 20)}}, {Key: "keyId", Value: "x"}}}}), code: 14},
		{name: "$clusterTime too far ahead", cmd: ct(bson.D{{Key: "clusterTime", Value: farFuture}, {Key: "signature", Value: sig}}), code: 205},
		// Stable API.
		{name: "apiVersion 1", cmd: with(find, "apiVersion", "1")},
		{name: "apiVersion 2", cmd: with(find, "apiVersion", "2"), code: 322},
		{name: "apiVersion 3", cmd: with(find, "apiVersion", "3"), code: 322},
		{name: "apiVersion not a string", cmd: with(find, "apiVersion", 1), code: 14},
		{name: "apiVersion empty", cmd: with(find, "apiVersion", ""), code: 322},
		{name: "apiVersion empty with apiStrict", cmd: with(with(find, "apiVersion", ""), "apiStrict", true), code: 322},
		{name: "isMaster under apiStrict", cmd: with(with(bson.D{{Key: "isMaster", Value: 1}}, "apiVersion", "1"), "apiStrict", true), code: 323},
		{name: "insert on system.js under apiStrict", cmd: with(with(bson.D{{Key: "insert", Value: "system.js"}, {Key: "documents", Value: bson.A{bson.D{}}}}, "apiVersion", "1"), "apiStrict", true), code: 323},
		{name: "find on system.js under apiStrict", cmd: with(with(bson.D{{Key: "find", Value: "system.js"}}, "apiVersion", "1"), "apiStrict", true)},
		{name: "apiStrict without apiVersion", cmd: with(find, "apiStrict", false), code: 4886600},
		{name: "apiStrict on a version 1 command", cmd: with(with(find, "apiVersion", "1"), "apiStrict", true)},
		{name: "apiStrict on another command", cmd: with(with(bson.D{{Key: "buildInfo", Value: 1}}, "apiVersion", "1"), "apiStrict", true), code: 323},
		{name: "apiStrict $changeStream showExpandedEvents", cmd: with(with(bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{{Key: "showExpandedEvents", Value: false}}}}}}, {Key: "cursor", Value: bson.D{}}}, "apiVersion", "1"), "apiStrict", true), code: 323},
		{name: "apiStrict $changeStream", cmd: with(with(bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{}}}, "apiVersion", "1"), "apiStrict", true)},
		{name: "apiStrict not a bool", cmd: with(with(find, "apiVersion", "1"), "apiStrict", 1), code: 14},
		{name: "apiDeprecationErrors", cmd: with(with(find, "apiVersion", "1"), "apiDeprecationErrors", true)},
		{name: "hello skips the API check", cmd: with(bson.D{{Key: "hello", Value: 1}}, "apiVersion", "9")},
		// Accepted: nothing to do on one node.
		{name: "$audit", cmd: with(ping, "$audit", bson.D{})},
		{name: "$client", cmd: with(ping, "$client", bson.D{})},
		{name: "mayBypassWriteBlocking", cmd: with(insert, "mayBypassWriteBlocking", true)},
		{name: "$queryOptions", cmd: with(find, "$queryOptions", bson.D{})},
		{name: "allowImplicitCollectionCreation true", cmd: with(insert, "allowImplicitCollectionCreation", true)},
		// Refused.
		{name: "allowImplicitCollectionCreation false", cmd: with(insert, "allowImplicitCollectionCreation", false), code: 238},
		{name: "shardVersion", cmd: with(find, "shardVersion", bson.A{}), code: 238},
		{name: "databaseVersion", cmd: with(find, "databaseVersion", bson.D{}), code: 238},
		{name: "clientOperationKey", cmd: with(find, "clientOperationKey", bson.Binary{}), code: 238},
		{name: "txnRetryCounter", cmd: with(find, "txnRetryCounter", 0), code: 238},
		{name: "maxTimeMSOpOnly", cmd: with(find, "maxTimeMSOpOnly", 10), code: 238},
		{name: "$configTime", cmd: with(find, "$configTime", now), code: 238},
		{name: "$topologyTime", cmd: with(find, "$topologyTime", now), code: 238},
		{name: "$tenant", cmd: with(find, "$tenant", bson.NewObjectID()), code: 72, msg: "Multitenancy not enabled, cannot set $tenant in command body"},
		{name: "coordinator", cmd: with(find, "coordinator", true), code: 238},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newReplSetService(t, wall)
			reply := runCmd(t, s, tt.cmd)
			ok, _ := reply.Lookup("ok").DoubleOK()
			if tt.code != 0 {
				if ok != 0 || code(reply) != tt.code {
					t.Fatalf("reply %v, want code %d", reply, tt.code)
				}
				if msg, _ := reply.Lookup("errmsg").StringValueOK(); !strings.Contains(msg, tt.msg) {
					t.Fatalf("errmsg %q, want %q in it", msg, tt.msg)
				}
				return
			}
			if ok != 1 {
				t.Fatalf("reply %v, want ok", reply)
			}
			got, _ := reply.Lookup("writeConcernError", "code").Int32OK()
			if got != tt.wce {
				t.Fatalf("writeConcernError code %d, want %d: %v", got, tt.wce, reply)
			}
		})
	}
}

// TestStandaloneWriteConcern: a standalone refuses what only other members
// could satisfy, before writing.
func TestStandaloneWriteConcern(t *testing.T) {
	for _, tt := range []struct {
		name string
		wc   bson.D
		code int32
	}{
		{"w 2", bson.D{{Key: "w", Value: 2}}, 2},
		{"w tag", bson.D{{Key: "w", Value: "tagX"}}, 2},
		{"w empty mode", bson.D{{Key: "w", Value: ""}}, 2},
		{"w majority", bson.D{{Key: "w", Value: "majority"}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestService(t)
			s.Sessions = sessions.NewRegistry()
			reply := runCmd(t, s, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "writeConcern", Value: tt.wc}})
			if code(reply) != tt.code {
				t.Fatalf("reply %v, want code %d", reply, tt.code)
			}
			if _, err := reply.LookupErr("$clusterTime"); err == nil {
				t.Fatalf("a standalone reported $clusterTime: %v", reply)
			}
		})
	}
}

// TestWriteConcernErrorReply checks the reply's shape: the write applied,
// writeConcernError after the command's fields and before ok, then the
// cluster time.
func TestWriteConcernErrorReply(t *testing.T) {
	s := newReplSetService(t, time.Unix(1_700_000_000, 0))
	reply := runCmd(t, s, bson.D{
		{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 1}}}},
		{Key: "ordered", Value: false}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}, {Key: "j", Value: 1}}},
	})
	elems, _ := reply.Elements()
	var keys []string
	for _, e := range elems {
		keys = append(keys, e.Key())
	}
	want := []string{"n", "electionId", "opTime", "writeErrors", "writeConcernError", "ok", "$clusterTime", "operationTime"}
	if len(keys) != len(want) {
		t.Fatalf("reply fields %v, want %v", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("reply fields %v, want %v", keys, want)
		}
	}
	wce := reply.Lookup("writeConcernError").Document()
	wantWCE := bson.D{
		{Key: "code", Value: int32(100)}, {Key: "codeName", Value: "UnsatisfiableWriteConcern"},
		{Key: "errmsg", Value: "Not enough data-bearing nodes"},
		{Key: "errInfo", Value: bson.D{{Key: "writeConcern", Value: bson.D{
			{Key: "w", Value: int32(2)}, {Key: "j", Value: true}, {Key: "wtimeout", Value: int32(0)}, {Key: "provenance", Value: "clientSupplied"},
		}}}},
	}
	if b, _ := bson.Marshal(wantWCE); string(b) != string(wce) {
		t.Fatalf("writeConcernError %v, want %v", wce, wantWCE)
	}
	if n, _ := reply.Lookup("n").Int32OK(); n != 1 {
		t.Fatalf("n = %d, want 1 (the write stands)", n)
	}
	// opTime {ts, t} is the write's time, which is the reply's operationTime.
	ts, i, _ := reply.Lookup("opTime", "ts").TimestampOK()
	ots, oi, _ := reply.Lookup("operationTime").TimestampOK()
	if term, ok := reply.Lookup("opTime", "t").Int64OK(); !ok || term != 1 || ts != ots || i != oi || ts == 0 {
		t.Fatalf("opTime %v, operationTime %v", reply.Lookup("opTime"), reply.Lookup("operationTime"))
	}
}

// TestWriteConcernEmptyMode: w: "" names a mode, as any string w does in
// MongoDB 7.0 (deserializeWriteConcernW keeps it; isUnacknowledged holds
// only for a numeric w below 1), not w: 0: the write is acknowledged and,
// no mode named "" being configured, carries writeConcernError 79
// (ReplSetConfig::findCustomWriteMode).
func TestWriteConcernEmptyMode(t *testing.T) {
	s := newReplSetService(t, time.Unix(1_700_000_000, 0))
	reply := runCmd(t, s, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}},
		{Key: "writeConcern", Value: bson.D{{Key: "w", Value: ""}}}})
	if n, _ := reply.Lookup("n").Int32OK(); n != 1 {
		t.Fatalf("reply %v, want n: 1 (an acknowledged write)", reply)
	}
	wce, ok := reply.Lookup("writeConcernError").DocumentOK()
	if !ok {
		t.Fatalf("reply %v, want a writeConcernError", reply)
	}
	if c, _ := wce.Lookup("code").Int32OK(); c != 79 || wce.Lookup("errmsg").StringValue() != "No write concern mode named '' found in replica set configuration" {
		t.Fatalf("writeConcernError %v, want 79 for mode ''", wce)
	}
	if w, ok := wce.Lookup("errInfo", "writeConcern", "w").StringValueOK(); !ok || w != "" {
		t.Fatalf("errInfo %v, want w: \"\"", wce.Lookup("errInfo"))
	}
}

// TestUpdateReplyOrder: update's reply lists upserted before nModified, as
// MongoDB does.
func TestUpdateReplyOrder(t *testing.T) {
	s := newTestService(t)
	s.Sessions = sessions.NewRegistry()
	reply := runCmd(t, s, bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}, {Key: "upsert", Value: true},
	}}}})
	want := bson.D{{Key: "n", Value: int32(1)}, {Key: "upserted", Value: bson.A{bson.D{{Key: "index", Value: int32(0)}, {Key: "_id", Value: int32(1)}}}}, {Key: "nModified", Value: int32(0)}, {Key: "ok", Value: 1.0}}
	if b, _ := bson.Marshal(want); string(b) != string(reply) {
		t.Fatalf("reply %v, want %v", reply, want)
	}
}

// TestClusterTimeReplies: every reply of a replica set member, errors
// included, carries $clusterTime {clusterTime, signature {hash: 20 zero
// bytes, keyId: 0}} and operationTime; a write's operationTime is newer
// than every time before it; a gossiped later $clusterTime advances the
// clock.
func TestClusterTimeReplies(t *testing.T) {
	s := newReplSetService(t, time.Unix(1_700_000_000, 0))
	last := clock.Time(0)
	check := func(reply bson.Raw, write bool) clock.Time {
		t.Helper()
		sig := reply.Lookup("$clusterTime", "signature")
		kind, hash := sig.Document().Lookup("hash").Binary()
		keyID, ok := sig.Document().Lookup("keyId").Int64OK()
		if kind != 0 || len(hash) != 20 || string(hash) != string(make([]byte, 20)) || !ok || keyID != 0 {
			t.Fatalf("signature %v", sig)
		}
		ts, i, ok := reply.Lookup("$clusterTime", "clusterTime").TimestampOK()
		ots, oi, ok2 := reply.Lookup("operationTime").TimestampOK()
		if !ok || !ok2 {
			t.Fatalf("reply without $clusterTime or operationTime: %v", reply)
		}
		ct := clock.FromTimestamp(bson.Timestamp{T: ts, I: i})
		op := clock.FromTimestamp(bson.Timestamp{T: ots, I: oi})
		if ct < last || op > ct || write && op <= last {
			t.Fatalf("clusterTime %v, operationTime %v after %v", ct, op, last)
		}
		last = ct
		return op
	}
	check(runCmd(t, s, bson.D{{Key: "hello", Value: 1}}), false)
	w1 := check(runCmd(t, s, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}), true)
	r1 := check(runCmd(t, s, bson.D{{Key: "find", Value: "c"}}), false)
	if r1 != w1 {
		t.Fatalf("read after a write: operationTime %v, want %v", r1, w1)
	}
	check(runCmd(t, s, bson.D{{Key: "nosuchcommand", Value: 1}}), false)
	check(runCmd(t, s, bson.D{{Key: "find", Value: 1}}), false)
	check(runCmd(t, s, bson.D{{Key: "create", Value: "d"}}), true)

	later := bson.Timestamp{T: 1_700_000_500, I: 3}
	sig := bson.D{{Key: "hash", Value: bson.Binary{Data: make([]byte, 20)}}, {Key: "keyId", Value: int64(0)}}
	reply := runCmd(t, s, bson.D{{Key: "ping", Value: 1}, {Key: "$clusterTime", Value: bson.D{{Key: "clusterTime", Value: later}, {Key: "signature", Value: sig}}}})
	check(reply, false)
	if ts, i, _ := reply.Lookup("$clusterTime", "clusterTime").TimestampOK(); ts != later.T || i != later.I {
		t.Fatalf("gossiped $clusterTime not taken: %v", reply)
	}
	// The gossiped time is now reachable by afterClusterTime.
	reply = runCmd(t, s, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "afterClusterTime", Value: later}}}})
	if code(reply) != 0 {
		t.Fatalf("afterClusterTime at the cluster time: %v", reply)
	}
}

// TestCommitWriteConcern: a transaction's statements may not carry a write
// concern; its commit may, and an unsatisfiable one still commits, with a
// writeConcernError.
func TestCommitWriteConcern(t *testing.T) {
	s := newReplSetService(t, time.Unix(1_700_000_000, 0))
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: make([]byte, 16)}}}
	txn := bson.D{{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}
	reply := runCmd(t, s, append(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "startTransaction", Value: true}}, txn...))
	if ok, _ := reply.Lookup("ok").DoubleOK(); ok != 1 {
		t.Fatalf("insert in transaction: %v", reply)
	}
	reply = runCmd(t, s, append(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 1}}}}, txn...))
	if code(reply) != 72 {
		t.Fatalf("statement with a write concern: %v, want 72", reply)
	}
	// That refusal came before the statement ran: the transaction is open.
	reply = runCmdOn(t, s, "admin", append(bson.D{{Key: "commitTransaction", Value: 1}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}}}}, txn...))
	if c, _ := reply.Lookup("writeConcernError", "code").Int32OK(); c != 100 || code(reply) != 0 {
		t.Fatalf("commit: %v, want ok with writeConcernError 100", reply)
	}
	count := runCmd(t, s, bson.D{{Key: "count", Value: "c"}})
	if n, _ := count.Lookup("n").Int32OK(); n != 1 {
		t.Fatalf("after commit: %v, want 1 document", count)
	}
}

// TestClusterTimeFieldsLen: the fields fit the request's array exactly,
// whatever the times, so a reply's trailer costs no allocation.
func TestClusterTimeFieldsLen(t *testing.T) {
	s := newReplSetService(t, time.Unix(1<<32-1, 0))
	for _, op := range []clock.Time{0, clock.Time(1<<64 - 1)} {
		r := &Request{}
		r.writeTime = op
		out := s.clusterTimeFields(r)
		if len(out) != clusterTimeFieldsLen || &out[0] != &r.timeFields[0] {
			t.Fatalf("operationTime %v: %d bytes (want %d), in the request's array: %v", op, len(out), clusterTimeFieldsLen, &out[0] == &r.timeFields[0])
		}
	}
}

// TestSnapshotGetMoreAtClusterTime: each getMore of a cursor read at
// readConcern snapshot outside a transaction reports the atClusterTime of
// its first batch (getmore_cmd.cpp; jstest readConcern_snapshot.js), and a
// getMore of any other cursor none.
func TestSnapshotGetMoreAtClusterTime(t *testing.T) {
	s := newReplSetService(t, time.Unix(1_700_000_000, 0))
	runCmd(t, s, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}}})
	for _, tt := range []struct {
		name     string
		rc       bson.D
		reported bool
	}{
		{"snapshot", bson.D{{Key: "level", Value: "snapshot"}}, true},
		{"local", bson.D{{Key: "level", Value: "local"}}, false},
	} {
		first := runCmd(t, s, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 0}, {Key: "readConcern", Value: tt.rc}})
		id, ok := first.Lookup("cursor", "id").Int64OK()
		if !ok || id == 0 {
			t.Fatalf("%s: find %v", tt.name, first)
		}
		wantT, wantI, _ := first.Lookup("cursor", "atClusterTime").TimestampOK()
		for i := 0; i < 2; i++ {
			more := runCmd(t, s, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: 1}})
			gotT, gotI, ok := more.Lookup("cursor", "atClusterTime").TimestampOK()
			if ok != tt.reported || ok && (gotT != wantT || gotI != wantI) {
				t.Fatalf("%s: getMore %d %v, want atClusterTime Timestamp(%d, %d) (reported %v)", tt.name, i, more, wantT, wantI, tt.reported)
			}
		}
	}
}
