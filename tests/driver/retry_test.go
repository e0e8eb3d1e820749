package driver_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/internal/instance"
)

// Retryable writes: https://www.mongodb.com/docs/manual/core/retryable-writes/
// A statement retried with the same lsid, txnNumber and stmtId is applied
// once; the retry answers the first result and lists the statement in
// retriedStmtIds (retriedStmtId for findAndModify).

// lsidFor is a session id made from a test's name.
func lsidFor(name string) bson.D {
	id := make([]byte, 16)
	copy(id, name)
	return bson.D{{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: id}}}
}

// inSession adds lsid and txnNumber to cmd.
func inSession(cmd bson.D, lsid bson.D, txn int64) bson.D {
	out := append(bson.D{}, cmd...)
	return append(out, bson.E{Key: "lsid", Value: lsid}, bson.E{Key: "txnNumber", Value: txn})
}

func mustRunRaw(t *testing.T, db *mongo.Database, cmd bson.D) bson.Raw {
	t.Helper()
	raw, err := db.RunCommand(context.Background(), cmd).Raw()
	if err != nil {
		t.Fatalf("%v: %v", cmd[0].Key, err)
	}
	return raw
}

// withoutRetried is a reply without its retriedStmtIds or retriedStmtId,
// nor the fields that name the moment of the reply rather than the write's
// outcome (electionId is new after a restart; the cluster and operation
// times move on).
func withoutRetried(t *testing.T, raw bson.Raw) string {
	t.Helper()
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	out := d[:0]
	for _, e := range d {
		switch e.Key {
		case "retriedStmtIds", "retriedStmtId", "electionId", "opTime", "$clusterTime", "operationTime":
		default:
			out = append(out, e)
		}
	}
	b, err := bson.MarshalExtJSON(out, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func retriedOf(raw bson.Raw) string {
	if v, err := raw.LookupErr("retriedStmtIds"); err == nil {
		return v.String()
	}
	if v, err := raw.LookupErr("retriedStmtId"); err == nil {
		return v.String()
	}
	return ""
}

// retryCase is one retryable write: its command, the retried statements'
// ids the retry must list, and the state it must leave.
type retryCase struct {
	name    string
	seed    []any
	cmd     bson.D
	retried string
	// check inspects the collection after the first run and after the
	// retry, which must not have changed it.
	want []bson.D
}

func retryCases(coll string) []retryCase {
	doc := func(id, n int32) bson.D { return bson.D{{Key: "_id", Value: id}, {Key: "n", Value: n}} }
	return []retryCase{
		{"insert", nil,
			bson.D{{Key: "insert", Value: coll}, {Key: "documents", Value: bson.A{doc(1, 0), doc(2, 0)}}},
			`[{"$numberInt":"0"},{"$numberInt":"1"}]`, []bson.D{doc(1, 0), doc(2, 0)}},
		{"update $inc", []any{doc(1, 0)},
			bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}}}}},
			`[{"$numberInt":"0"}]`, []bson.D{doc(1, 1)}},
		{"upsert", nil,
			bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "k", Value: "a"}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "upsert", Value: true}}}}},
			`[{"$numberInt":"0"}]`, nil},
		{"delete", []any{doc(1, 0), doc(2, 0)},
			bson.D{{Key: "delete", Value: coll}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 1}}}}},
			`[{"$numberInt":"0"}]`, []bson.D{doc(2, 0)}},
		{"findAndModify $inc new", []any{doc(1, 0)},
			bson.D{{Key: "findAndModify", Value: coll}, {Key: "query", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "update", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "new", Value: true}, {Key: "fields", Value: bson.D{{Key: "n", Value: 1}, {Key: "_id", Value: 0}}}},
			`{"$numberInt":"0"}`, []bson.D{doc(1, 1)}},
		{"findAndModify remove", []any{doc(1, 0), doc(2, 0)},
			bson.D{{Key: "findAndModify", Value: coll}, {Key: "query", Value: bson.D{}}, {Key: "sort", Value: bson.D{{Key: "_id", Value: -1}}}, {Key: "remove", Value: true}},
			`{"$numberInt":"0"}`, []bson.D{doc(1, 0)}},
		{"findAndModify upsert", nil,
			bson.D{{Key: "findAndModify", Value: coll}, {Key: "query", Value: bson.D{{Key: "_id", Value: 7}}}, {Key: "update", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "upsert", Value: true}},
			`{"$numberInt":"0"}`, []bson.D{doc(7, 1)}},
		{"bulk update", []any{doc(1, 0), doc(2, 0)},
			bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: bson.A{
				bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}},
				bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 2}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 5}}}}}},
			}}, {Key: "stmtIds", Value: bson.A{int32(10), int32(20)}}},
			`[{"$numberInt":"10"},{"$numberInt":"20"}]`, []bson.D{doc(1, 1), doc(2, 5)}},
	}
}

// TestRetryableWritesApplyOnce runs each kind of retryable write, retries
// it, and checks that the retry changed nothing and answered the first
// result with the retried statement ids.
func TestRetryableWritesApplyOnce(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	db := client.Database(testDB)
	for i, tc := range retryCases("") {
		t.Run(tc.name, func(t *testing.T) {
			coll := "retry_once_" + string(rune('a'+i))
			cmd := append(bson.D{{Key: tc.cmd[0].Key, Value: coll}}, tc.cmd[1:]...)
			if tc.seed != nil {
				if _, err := db.Collection(coll).InsertMany(t.Context(), tc.seed); err != nil {
					t.Fatal(err)
				}
			}
			lsid := lsidFor(tc.name)
			first := mustRunRaw(t, db, inSession(cmd, lsid, 1))
			after := findAll(t, db.Collection(coll), bson.D{})
			retry := mustRunRaw(t, db, inSession(cmd, lsid, 1))
			if got, want := withoutRetried(t, retry), withoutRetried(t, first); got != want {
				t.Errorf("retry answered %s, first %s", got, want)
			}
			if got := retriedOf(retry); got != tc.retried {
				t.Errorf("retried ids %s, want %s", got, tc.retried)
			}
			if retriedOf(first) != "" {
				t.Errorf("first reply lists retried statements: %s", first)
			}
			if got := findAll(t, db.Collection(coll), bson.D{}); len(got) != len(after) || (len(got) > 0 && got[0].String() != after[0].String()) {
				t.Errorf("retry changed the collection: %v, was %v", got, after)
			}
			if tc.want != nil {
				got := findAll(t, db.Collection(coll), bson.D{})
				if len(got) != len(tc.want) {
					t.Fatalf("documents %v, want %v", got, tc.want)
				}
				for j := range got {
					if w := mustRaw(t, tc.want[j]); got[j].String() != w.String() {
						t.Errorf("document %d = %s, want %s", j, got[j], w)
					}
				}
			}
		})
	}
}

// TestRetryableBatchRunsOnlyMissingStatements retries a batch whose first
// statements ran: only the others run, as MongoDB executes a retried batch.
func TestRetryableBatchRunsOnlyMissingStatements(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	db := client.Database(testDB)
	lsid := lsidFor(t.Name())
	inc := func(id int) bson.D {
		return bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: id}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "upsert", Value: true}}
	}
	// The first attempt carried statements 0 and 1 only (its reply lost).
	mustRunRaw(t, db, inSession(bson.D{{Key: "update", Value: "partial"}, {Key: "updates", Value: bson.A{inc(1), inc(2)}}}, lsid, 3))
	reply := mustRunRaw(t, db, inSession(bson.D{{Key: "update", Value: "partial"}, {Key: "updates", Value: bson.A{inc(1), inc(2), inc(3)}}}, lsid, 3))
	if got, want := retriedOf(reply), `[{"$numberInt":"0"},{"$numberInt":"1"}]`; got != want {
		t.Errorf("retried %s, want %s", got, want)
	}
	if n, _ := reply.Lookup("n").Int32OK(); n != 3 {
		t.Errorf("n = %d, want 3: %s", n, reply)
	}
	if up := reply.Lookup("upserted").String(); up != `[{"index": {"$numberInt":"0"},"_id": {"$numberInt":"1"}},{"index": {"$numberInt":"1"},"_id": {"$numberInt":"2"}},{"index": {"$numberInt":"2"},"_id": {"$numberInt":"3"}}]` {
		t.Errorf("upserted %s", up)
	}
	for _, d := range findAll(t, db.Collection("partial"), bson.D{}) {
		if n, _ := d.Lookup("n").AsInt64OK(); n != 1 {
			t.Errorf("%s applied %d times", d, n)
		}
	}
	// Inserts likewise: statements 0 and 1 ran, 2 did not.
	docs := bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}
	mustRunRaw(t, db, inSession(bson.D{{Key: "insert", Value: "partialins"}, {Key: "documents", Value: docs[:2]}}, lsid, 4))
	reply = mustRunRaw(t, db, inSession(bson.D{{Key: "insert", Value: "partialins"}, {Key: "documents", Value: docs}}, lsid, 4))
	if n, _ := reply.Lookup("n").Int32OK(); n != 3 || reply.Lookup("writeErrors").Type != 0 {
		t.Errorf("retried insert: %s, want n 3 and no duplicate key", reply)
	}
}

// TestRetryableStmtIdNumbersStatements checks that a batch's stmtId numbers
// its statements from that id on, as mongos sends it: the retry names the
// statements 5 and 6.
func TestRetryableStmtIdNumbersStatements(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	db := client.Database(testDB)
	lsid := lsidFor(t.Name())
	cmd := bson.D{{Key: "insert", Value: "stmtid"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}}, {Key: "stmtId", Value: int32(5)}}
	mustRunRaw(t, db, inSession(cmd, lsid, 1))
	reply := mustRunRaw(t, db, inSession(cmd, lsid, 1))
	if got, want := retriedOf(reply), `[{"$numberInt":"5"},{"$numberInt":"6"}]`; got != want {
		t.Errorf("retried %s, want %s: %s", got, want, reply)
	}
	bad := append(cmd[:2:2], bson.E{Key: "stmtId", Value: "five"})
	if _, err := db.RunCommand(t.Context(), inSession(bad, lsid, 2)).Raw(); serverCode(err) != 14 {
		t.Errorf("stmtId of the wrong type: %v, want TypeMismatch", err)
	}
}

// TestRetryableWriteRules covers the session rules around retries: a retry
// is checked like a first attempt, a lower txnNumber is too old, a higher
// one starts afresh, and multi statements cannot be retryable.
func TestRetryableWriteRules(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	db := client.Database(testDB)
	lsid := lsidFor(t.Name())
	inc := bson.D{{Key: "update", Value: "rules"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "upsert", Value: true}}}}}
	mustRunRaw(t, db, inSession(inc, lsid, 5))
	bad := append(bson.D{}, inc...)
	bad = append(bad, bson.E{Key: "ordered", Value: "yes"})
	if err := db.RunCommand(t.Context(), inSession(bad, lsid, 5)).Err(); serverCode(err) != 14 {
		t.Errorf("retry with a wrong argument type: %v, want 14 TypeMismatch", err)
	}
	if err := db.RunCommand(t.Context(), inSession(inc, lsid, 4)).Err(); serverCode(err) != 225 {
		t.Errorf("lower txnNumber: %v, want 225 TransactionTooOld", err)
	}
	reply := mustRunRaw(t, db, inSession(inc, lsid, 6))
	if retriedOf(reply) != "" {
		t.Errorf("a higher txnNumber reused the earlier result: %s", reply)
	}
	if err := db.RunCommand(t.Context(), inSession(inc, lsid, 5)).Err(); serverCode(err) != 225 {
		t.Errorf("the cleared txnNumber: %v, want 225 TransactionTooOld", err)
	}
	var doc struct{ N int32 }
	if err := db.Collection("rules").FindOne(t.Context(), bson.D{}).Decode(&doc); err != nil || doc.N != 2 {
		t.Errorf("n = %d (%v), want 2", doc.N, err)
	}
	multi := bson.D{{Key: "update", Value: "rules"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "multi", Value: true}}}}}
	if err := db.RunCommand(t.Context(), inSession(multi, lsid, 7)).Err(); serverCode(err) != 72 {
		t.Errorf("multi update in a retryable write: %v, want write error 72 InvalidOptions", err)
	}
	deleteAll := bson.D{{Key: "delete", Value: "rules"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}}
	if err := db.RunCommand(t.Context(), inSession(deleteAll, lsid, 8)).Err(); serverCode(err) != 72 {
		t.Errorf("limit 0 delete in a retryable write: %v, want write error 72 InvalidOptions", err)
	}
	// A transaction number is used once: by a retryable write or by a
	// transaction.
	startTxn := append(inSession(inc, lsid, 8), bson.E{Key: "autocommit", Value: false}, bson.E{Key: "startTransaction", Value: true})
	if err := db.RunCommand(t.Context(), startTxn).Err(); serverCode(err) != 117 {
		t.Errorf("a transaction at a retryable write's txnNumber: %v, want 117 ConflictingOperationInProgress", err)
	}
	startTxn = append(inSession(inc, lsid, 9), bson.E{Key: "autocommit", Value: false}, bson.E{Key: "startTransaction", Value: true})
	if err := db.RunCommand(t.Context(), startTxn).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(t.Context(), inSession(inc, lsid, 9)).Err(); serverCode(err) != 217 {
		t.Errorf("a retryable write at a transaction's txnNumber: %v, want 217 IncompleteTransactionHistory", err)
	}
	shortID := bson.D{{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: []byte("short")}}}
	if err := db.RunCommand(t.Context(), inSession(inc, shortID, 1)).Err(); serverCode(err) != 207 {
		t.Errorf("a 5-byte lsid: %v, want 207 InvalidUUID", err)
	}
}

// TestRetryAfterRestart closes an on-disk server between a write and its
// retry, and between a commit and its retry: the records were stored with
// the writes, so nothing is applied twice and the commit's retry succeeds.
func TestRetryAfterRestart(t *testing.T) {
	// the same access control both times: a session's uid is its user's
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir(), ReplSetName: "folio", Auth: testAuth()}
	in, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth {
		ensureRootUser(t, in)
	}
	client := dial(t, in)
	db := client.Database(testDB)
	cases := retryCases("")
	firsts := make([]bson.Raw, len(cases))
	cmds := make([]bson.D, len(cases))
	for i, tc := range cases {
		coll := "restart_" + string(rune('a'+i))
		cmds[i] = append(bson.D{{Key: tc.cmd[0].Key, Value: coll}}, tc.cmd[1:]...)
		if tc.seed != nil {
			if _, err := db.Collection(coll).InsertMany(t.Context(), tc.seed); err != nil {
				t.Fatal(err)
			}
		}
		firsts[i] = mustRunRaw(t, db, inSession(cmds[i], lsidFor(tc.name), 9))
	}
	txnLsid := lsidFor("transaction")
	txnCmd := func(cmd bson.D, start bool) bson.D {
		cmd = inSession(cmd, txnLsid, 2)
		cmd = append(cmd, bson.E{Key: "autocommit", Value: false})
		if start {
			cmd = append(cmd, bson.E{Key: "startTransaction", Value: true})
		}
		return cmd
	}
	mustRunRaw(t, db, txnCmd(bson.D{{Key: "insert", Value: "restart_txn"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}}, true))
	commit := txnCmd(bson.D{{Key: "commitTransaction", Value: 1}}, false)
	admin := client.Database("admin")
	mustRunRaw(t, admin, commit)
	if err := client.Disconnect(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := in.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	in = startInstance(t, cfg)
	client = connect(t, in)
	db, admin = client.Database(testDB), client.Database("admin")
	for i, tc := range cases {
		retry := mustRunRaw(t, db, inSession(cmds[i], lsidFor(tc.name), 9))
		if got, want := withoutRetried(t, retry), withoutRetried(t, firsts[i]); got != want || retriedOf(retry) != tc.retried {
			t.Errorf("%s after a restart: %s, first %s", tc.name, retry, firsts[i])
		}
		if tc.want != nil {
			if got := findAll(t, db.Collection(cmds[i][0].Value.(string)), bson.D{}); len(got) != len(tc.want) || got[0].String() != mustRaw(t, tc.want[0]).String() {
				t.Errorf("%s after a restart: documents %v, want %v", tc.name, got, tc.want)
			}
		}
		if err := db.RunCommand(t.Context(), inSession(cmds[i], lsidFor(tc.name), 8)).Err(); serverCode(err) != 225 {
			t.Errorf("%s: a lower txnNumber after a restart: %v, want 225", tc.name, err)
		}
	}
	mustRunRaw(t, admin, commit)
	abort := txnCmd(bson.D{{Key: "abortTransaction", Value: 1}}, false)
	if err := admin.RunCommand(t.Context(), abort).Err(); serverCode(err) != 256 {
		t.Errorf("abort after a commit, after a restart: %v, want 256 TransactionCommitted", err)
	}
	badCommit := txnCmd(bson.D{{Key: "commitTransaction", Value: 1}, {Key: "recoveryToken", Value: 1}}, false)
	if err := admin.RunCommand(t.Context(), badCommit).Err(); serverCode(err) != 14 {
		t.Errorf("retried commit with a wrong argument type: %v, want 14 TypeMismatch", err)
	}
}

// TestRetryableWriteUnloggedNamespace writes the local database in
// retryable writes: MongoDB logs no oplog entry there, so each statement
// that would change a document fails with IllegalOperation and writes
// nothing, one that changes none succeeds, and findAndModify fails
// (jstests/sharding/retryable_writes.js runInvalidTests).
func TestRetryableWriteUnloggedNamespace(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	local := client.Database("local")
	lsid := lsidFor(t.Name())
	codes := func(reply bson.Raw) []int32 {
		var r struct {
			WriteErrors []struct{ Index, Code int32 }
		}
		if err := bson.Unmarshal(reply, &r); err != nil {
			t.Fatal(err)
		}
		var out []int32
		for _, we := range r.WriteErrors {
			out = append(out, we.Index, we.Code)
		}
		return out
	}
	// a reply with write errors is an error to the driver
	run := func(cmd bson.D) bson.Raw {
		t.Helper()
		reply, err := local.RunCommand(t.Context(), cmd).Raw()
		if reply == nil {
			t.Fatalf("%v: %v", cmd[0].Key, err)
		}
		return reply
	}
	check := func(what string, reply bson.Raw, n int32, want ...int32) {
		t.Helper()
		if got, _ := reply.Lookup("n").Int32OK(); got != n || !slices.Equal(codes(reply), want) {
			t.Errorf("%s: %s, want n %d and write errors (index, code) %v", what, reply, n, want)
		}
	}
	ins := bson.D{{Key: "insert", Value: "unlogged"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}}, {Key: "ordered", Value: false}}
	check("retryable insert", run(inSession(ins, lsid, 1)), 0, 0, 20, 1, 20)
	// without a txnNumber the write is an ordinary one
	check("insert", run(ins), 2)
	// the duplicate key is found first, as the op observer runs last
	ins[1].Value = bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 3}}}
	check("retryable insert of a duplicate", run(inSession(ins, lsid, 2)), 0, 0, 11000, 1, 20)
	upd := bson.D{{Key: "update", Value: "unlogged"}, {Key: "updates", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}},
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 9}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}},
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 8}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}},
	}}, {Key: "ordered", Value: false}}
	check("retryable update", run(inSession(upd, lsid, 3)), 0, 0, 20, 2, 20)
	del := bson.D{{Key: "delete", Value: "unlogged"}, {Key: "deletes", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 9}}}, {Key: "limit", Value: 1}},
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 2}}}, {Key: "limit", Value: 1}},
	}}}
	check("retryable delete", run(inSession(del, lsid, 4)), 0, 1, 20)
	fam := bson.D{{Key: "findAndModify", Value: "unlogged"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "update", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}}
	if err := local.RunCommand(t.Context(), inSession(fam, lsid, 5)).Err(); serverCode(err) != 20 {
		t.Errorf("retryable findAndModify: %v, want 20 IllegalOperation", err)
	}
	got := findAll(t, local.Collection("unlogged"), bson.D{})
	if len(got) != 2 || got[0].Lookup("x").Type != 0 || got[1].Lookup("x").Type != 0 {
		t.Errorf("documents %v, want {_id: 1} and {_id: 2} unchanged", got)
	}
}

// TestTxnNumberTooOldMessages checks TransactionTooOld's messages, which
// name the session and whether the newer txnNumber is a retryable write
// or a transaction (TransactionParticipant::beginOrContinue; a retryable
// write has txnRetryCounter -1, a transaction 0).
func TestTxnNumberTooOldMessages(t *testing.T) {
	client := startReplSet(t)
	db := client.Database(testDB)
	lsid := lsidFor(t.Name())
	// the session as MongoDB shows a LogicalSessionId: id - uid -  -
	session := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} - [A-Za-z0-9+/]{43}= -  - `
	inc := bson.D{{Key: "update", Value: "tooold"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "upsert", Value: true}}}}}
	txn := func(n int64) bson.D {
		return append(inSession(inc, lsid, n), bson.E{Key: "autocommit", Value: false}, bson.E{Key: "startTransaction", Value: true})
	}
	refused := func(cmd bson.D, want string) {
		t.Helper()
		err := db.RunCommand(t.Context(), cmd).Err()
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 225 || !regexp.MustCompile("^"+want+"$").MatchString(ce.Message) {
			t.Errorf("got %v, want 225 TransactionTooOld %q", err, want)
		}
	}
	mustRunRaw(t, db, inSession(inc, lsid, 5))
	refused(inSession(inc, lsid, 4), `Retryable write with txnNumber 4 is prohibited on session `+session+` because a newer retryable write with txnNumber 5 has already started on this session\.`)
	refused(txn(4), `Cannot start transaction with \{ txnNumber: 4 \} on session `+session+` because a newer retryable write with txnNumberAndRetryCounter \{ txnNumber: 5, txnRetryCounter: -1 \} has already started on this session\.`)
	mustRunRaw(t, db, txn(6))
	refused(inSession(inc, lsid, 5), `Retryable write with txnNumber 5 is prohibited on session `+session+` because a newer transaction with txnNumber 6 has already started on this session\.`)
	refused(txn(5), `Cannot start transaction with \{ txnNumber: 5 \} on session `+session+` because a newer transaction with txnNumberAndRetryCounter \{ txnNumber: 6, txnRetryCounter: 0 \} has already started on this session\.`)
}

// TestRetryableWriteStats checks serverStatus.transactions' retryable
// write counts, as jstests/sharding/retryable_writes.js does: a retried
// command, its retried statements, and each write of a session record
// (config.transactions in MongoDB: one per insert batch, one per update or
// delete statement).
func TestRetryableWriteStats(t *testing.T) {
	client := startReplSet(t)
	db := client.Database(testDB)
	lsid := lsidFor(t.Name())
	stats := func() [3]int64 {
		t.Helper()
		status := mustRunRaw(t, client.Database("admin"), bson.D{{Key: "serverStatus", Value: 1}})
		elems, err := status.Lookup("transactions").Document().Elements()
		if err != nil || len(elems) < 3 {
			t.Fatalf("serverStatus.transactions: %v %v", elems, err)
		}
		var out [3]int64
		for i, name := range []string{"retriedCommandsCount", "retriedStatementsCount", "transactionsCollectionWriteCount"} {
			if elems[i].Key() != name {
				t.Fatalf("serverStatus.transactions field %d is %s, want %s", i, elems[i].Key(), name)
			}
			out[i] = elems[i].Value().Int64()
		}
		return out
	}
	for n, tc := range []struct {
		name string
		cmd  bson.D
		want [3]int64 // new retried commands, retried statements, record writes
	}{
		{"insert", bson.D{{Key: "insert", Value: "stats"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 10}}, bson.D{{Key: "_id", Value: 30}}}}, {Key: "ordered", Value: false}}, [3]int64{1, 2, 1}},
		{"update", bson.D{{Key: "update", Value: "stats"}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 10}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}},
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 20}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "y", Value: 1}}}}}, {Key: "upsert", Value: true}},
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 30}}}, {Key: "u", Value: bson.D{{Key: "z", Value: 1}}}},
		}}, {Key: "ordered", Value: false}}, [3]int64{1, 3, 3}},
		{"delete", bson.D{{Key: "delete", Value: "stats"}, {Key: "deletes", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 10}}}, {Key: "limit", Value: 1}},
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 20}}}, {Key: "limit", Value: 1}},
		}}}, [3]int64{1, 2, 2}},
		{"findAndModify", bson.D{{Key: "findAndModify", Value: "stats"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 60}}}, {Key: "update", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}}, [3]int64{1, 1, 1}},
	} {
		before := stats()
		for range 2 {
			mustRunRaw(t, db, inSession(tc.cmd, lsid, int64(n+1)))
		}
		after := stats()
		if got := [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]}; got != tc.want {
			t.Errorf("%s and its retry: retried commands, retried statements, record writes %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRetryByAnotherKindOfCommand retries statements with commands of
// another kind than the first execution's: the retry is answered from the
// change the statement made, or refused when that change does not fit it,
// as MongoDB reads the statement's oplog entry (write_ops_retryability.cpp
// parseOplogEntryForUpdate, validateFindAndModifyRetryability).
func TestRetryByAnotherKindOfCommand(t *testing.T) {
	client := startReplSet(t)
	db := client.Database(testDB)
	lsid := lsidFor(t.Name())
	if _, err := db.Collection("kinds").InsertMany(t.Context(), []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	update := bson.D{{Key: "update", Value: "kinds"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}}}}}
	del := func(id int) bson.D {
		return bson.D{{Key: "delete", Value: "kinds"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: id}}}, {Key: "limit", Value: 1}}}}}
	}
	fam := func(id int, extra ...bson.E) bson.D {
		return append(bson.D{{Key: "findAndModify", Value: "kinds"}, {Key: "query", Value: bson.D{{Key: "_id", Value: id}}}}, extra...)
	}
	inc := bson.E{Key: "update", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}
	upsert := bson.E{Key: "upsert", Value: true}
	insert := bson.D{{Key: "insert", Value: "kinds"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 4}}}}}
	for i, tc := range []struct {
		name         string
		first, retry bson.D
		code         int    // the retry's error
		reply        string // or a field of its reply, as Extended JSON
		field        string
	}{
		{"update of a delete", del(2), update, 40638, "", ""},
		{"findAndModify of an update", update, fam(1, inc), 40612, "", ""},
		{"findAndModify new of an update", update, fam(1, inc, bson.E{Key: "new", Value: true}), 40611, "", ""},
		{"findAndModify update of a findAndModify remove", fam(3, bson.E{Key: "remove", Value: true}), fam(3, inc), 40606, "", ""},
		{"findAndModify of an insert", insert, fam(4, inc), 40608, "", ""},
		{"update of a findAndModify update", fam(1, inc), update, 0, `{"$numberInt":"1"}`, "nModified"},
		{"findAndModify remove of a findAndModify update", fam(1, inc), fam(1, bson.E{Key: "remove", Value: true}), 0,
			`{"n": {"$numberInt":"1"},"updatedExisting": true}`, "lastErrorObject"},
		{"findAndModify new of a findAndModify upsert", fam(5, inc, upsert), fam(5, inc, upsert, bson.E{Key: "new", Value: true}), 0,
			`{"_id": {"$numberInt":"5"},"n": {"$numberInt":"1"}}`, "value"},
		{"findAndModify of a findAndModify new upsert", fam(6, inc, upsert, bson.E{Key: "new", Value: true}), fam(6, inc, upsert), 0,
			`null`, "value"},
	} {
		txn := int64(i + 1)
		mustRunRaw(t, db, inSession(tc.first, lsid, txn))
		reply, err := db.RunCommand(t.Context(), inSession(tc.retry, lsid, txn)).Raw()
		if tc.code != 0 {
			if serverCode(err) != tc.code {
				t.Errorf("%s: %v %s, want code %d", tc.name, err, reply, tc.code)
			}
			continue
		}
		if err != nil || reply.Lookup(tc.field).String() != tc.reply {
			t.Errorf("%s: %s %v, want %s %s", tc.name, reply, err, tc.field, tc.reply)
		}
	}
}

// TestRetriedUpdateReplyOrder: a retried update lists retriedStmtIds among
// the fields every write reply shares (WriteCommandReplyBase: n,
// writeErrors, retriedStmtIds), which UpdateCommandReply chains before its
// own upserted and nModified (write_ops.idl; write_commands.cpp's
// populateReply sets it on the reply base).
func TestRetriedUpdateReplyOrder(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	db := client.Database(testDB)
	keys := func(raw bson.Raw) []string {
		elems, err := raw.Elements()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range elems {
			switch k := e.Key(); k {
			case "electionId", "opTime", "$clusterTime", "operationTime":
			default:
				out = append(out, k)
			}
		}
		return out
	}
	if _, err := db.Collection("retryorder").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	stmt := func(q bson.D, u bson.D) bson.D {
		return bson.D{{Key: "q", Value: q}, {Key: "u", Value: u}, {Key: "upsert", Value: true}}
	}
	for _, tc := range []struct {
		name string
		cmd  bson.D
		want []string
	}{
		{"upsert", bson.D{{Key: "update", Value: "retryorder"}, {Key: "updates", Value: bson.A{
			stmt(bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}),
		}}}, []string{"n", "retriedStmtIds", "upserted", "nModified", "ok"}},
		{"write error", bson.D{{Key: "update", Value: "retryorder"}, {Key: "ordered", Value: false}, {Key: "updates", Value: bson.A{
			stmt(bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "_id", Value: 9}}}}),
			stmt(bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}),
		}}}, []string{"n", "writeErrors", "retriedStmtIds", "nModified", "ok"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lsid := lsidFor("order " + tc.name)
			// A reply with writeErrors comes with the driver's
			// WriteException: only the reply matters here.
			run := func() bson.Raw {
				raw, err := db.RunCommand(t.Context(), inSession(tc.cmd, lsid, 1)).Raw()
				if _, ok := errors.AsType[mongo.WriteException](err); err != nil && !ok {
					t.Fatal(err)
				}
				return raw
			}
			run()
			retry := run()
			if got := keys(retry); !slices.Equal(got, tc.want) {
				t.Errorf("retried reply's fields %v, want %v: %s", got, tc.want, retry)
			}
		})
	}
}
