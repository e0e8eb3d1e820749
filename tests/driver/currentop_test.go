package driver_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
)

// TestCurrentOpIdle: currentOp's $all adds the connections running
// nothing, and both it and the $currentOp stage (idleSessions on by
// default) list the open transactions no command runs in; the stage's
// idleConnections and idleCursors add the idle connections and the cursors
// between getMores (type "idleCursor", with their originatingCommand); a
// running operation shows its session (lsid); bad stage options are refused.
// https://www.mongodb.com/docs/v7.0/reference/command/currentOp/
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/currentOp/
func TestCurrentOpIdle(t *testing.T) {
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	in := startInstance(t, cfg)
	client := connect(t, in)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.RunCommand(ctx, bson.D{{Key: "insert", Value: "cop"}, {Key: "documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}, bson.D{{Key: "a", Value: 3}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	// An idle cursor, and an open transaction between its statements.
	reply, err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "cop"}, {Key: "batchSize", Value: 1}, {Key: "comment", Value: "idle"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	cursorID := reply.Lookup("cursor", "id").Int64()
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("cop").InsertOne(mongo.NewSessionContext(ctx, sess), bson.D{{Key: "a", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	defer sess.AbortTransaction(ctx)
	// A second client: its pooled connection is idle.
	connect(t, in)

	hostname, _ := os.Hostname()
	_, port, _ := net.SplitHostPort(in.Addr())
	host := hostname + ":" + port
	admin := client.Database("admin")
	viaCommand := func(extra ...bson.E) []bson.Raw {
		var out struct{ Inprog []bson.Raw }
		if err := admin.RunCommand(ctx, append(bson.D{{Key: "currentOp", Value: 1}}, extra...)).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out.Inprog
	}
	viaStage := func(opts bson.D) ([]bson.Raw, error) {
		cur, err := admin.Aggregate(ctx, bson.A{bson.D{{Key: "$currentOp", Value: opts}}})
		if err != nil {
			return nil, err
		}
		var out []bson.Raw
		err = cur.All(ctx, &out)
		return out, err
	}
	count := func(docs []bson.Raw, match func(bson.Raw) bool) int {
		n := 0
		for _, d := range docs {
			if match(d) {
				n++
			}
		}
		return n
	}
	idleConn := func(d bson.Raw) bool {
		active, _ := d.Lookup("active").BooleanOK()
		return d.Lookup("type").StringValue() == "op" && !active
	}
	idleSession := func(d bson.Raw) bool {
		return d.Lookup("type").StringValue() == "idleSession" && d.Lookup("transaction", "parameters", "txnNumber").AsInt64() >= 1
	}
	idleCursor := func(d bson.Raw) bool {
		// with the command that opened it, its plan at the top level, what
		// it returned and when it was created, in GenericCursor's field
		// order (currentop_cursors.js, generic_cursor.idl)
		comment, _ := d.Lookup("cursor", "originatingCommand", "comment").StringValueOK()
		var fields []string
		cur, _ := d.Lookup("cursor").DocumentOK()
		elems, _ := cur.Elements()
		for _, e := range elems {
			fields = append(fields, e.Key())
		}
		plan, _ := d.Lookup("planSummary").StringValueOK()
		docs, _ := d.Lookup("cursor", "nDocsReturned").AsInt64OK()
		batches, _ := d.Lookup("cursor", "nBatchesReturned").AsInt64OK()
		return d.Lookup("type").StringValue() == "idleCursor" && d.Lookup("cursor", "cursorId").Int64() == cursorID && d.Lookup("ns").StringValue() == testDB+".cop" &&
			comment == "idle" && plan == "COLLSCAN" && docs == 1 && batches == 1 &&
			strings.Join(fields, " ") == "cursorId createdDate lastAccessDate nDocsReturned nBatchesReturned noCursorTimeout tailable awaitData originatingCommand"
	}
	mustStage := func(opts bson.D) []bson.Raw {
		docs, err := viaStage(opts)
		if err != nil {
			t.Fatal(err)
		}
		return docs
	}
	for _, tc := range []struct {
		name                    string
		docs                    []bson.Raw
		conns, sessions, cursor bool
	}{
		{"command", viaCommand(), false, true, false},
		{"command $all", viaCommand(bson.E{Key: "$all", Value: true}), true, true, false},
		{"command $ownOps", viaCommand(bson.E{Key: "$ownOps", Value: true}), false, true, false},
		{"command filter", viaCommand(bson.E{Key: "type", Value: "idleSession"}), false, true, false},
		{"stage defaults", mustStage(bson.D{}), false, true, false},
		{"stage idleConnections", mustStage(bson.D{{Key: "idleConnections", Value: true}}), true, true, false},
		{"stage idleSessions off", mustStage(bson.D{{Key: "idleSessions", Value: false}}), false, false, false},
		{"stage idleCursors", mustStage(bson.D{{Key: "idleCursors", Value: true}, {Key: "allUsers", Value: true}}), false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := count(tc.docs, idleConn) > 0; got != tc.conns {
				t.Errorf("idle connections listed: %v, want %v (%v)", got, tc.conns, tc.docs)
			}
			if got := count(tc.docs, idleSession) == 1; got != tc.sessions {
				t.Errorf("idle session listed: %v, want %v (%v)", got, tc.sessions, tc.docs)
			}
			if got := count(tc.docs, idleCursor) == 1; got != tc.cursor {
				t.Errorf("idle cursor listed: %v, want %v (%v)", got, tc.cursor, tc.docs)
			}
			// every report names the server by the machine's host name and
			// its port (getHostNameCachedAndPort), not the address it
			// listens on
			for _, d := range tc.docs {
				if got := d.Lookup("host").StringValue(); got != host {
					t.Errorf("host %q, want %q (%v)", got, host, d)
				}
			}
		})
	}
	// A running operation shows the session it runs in (lsid).
	sess2, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.EndSession(ctx)
	var mine struct{ Inprog []bson.Raw }
	if err := admin.RunCommand(mongo.NewSessionContext(ctx, sess2), bson.D{{Key: "currentOp", Value: 1},
		{Key: "command.currentOp", Value: bson.D{{Key: "$exists", Value: true}}}}).Decode(&mine); err != nil {
		t.Fatal(err)
	}
	if len(mine.Inprog) != 1 || !mine.Inprog[0].Lookup("lsid", "id").Equal(sess2.ID().Lookup("id")) {
		t.Errorf("currentOp in a session: %v, want its own operation with the session's lsid %s", mine.Inprog, sess2.ID())
	}
	for _, tc := range []struct {
		name string
		opts bson.D
		code int
	}{
		{"unknown option", bson.D{{Key: "idle", Value: true}}, 9},
		{"not a boolean", bson.D{{Key: "idleCursors", Value: 1}}, 9},
		{"backtrace", bson.D{{Key: "backtrace", Value: true}}, 238},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := viaStage(tc.opts)
			requireCode(t, err, tc.code, "")
		})
	}
}

// TestCurrentOpTruncatesLargeCommands: the currentOp command shows a command
// larger than 1000 bytes as {$truncated: <its abbreviated text (a long
// string shows its first 150 bytes), cut to 1000 bytes>, comment}, as
// MongoDB's CurOp does; the $currentOp stage does so only with
// truncateOps: true, and shows it whole by default.
// https://www.mongodb.com/docs/v7.0/reference/command/currentOp/#currentop-output-fields
func TestCurrentOpTruncatesLargeCommands(t *testing.T) {
	client, _ := startBounded(t)
	coll := client.Database(testDB).Collection("truncated")
	seedSlow(t, coll)
	const comment = "large command"
	filter := bson.D{{Key: "$and", Value: bson.A{slowFilter(), bson.D{{Key: "pad", Value: bson.D{{Key: "$ne", Value: strings.Repeat("x", 2000)}}}}}}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		cur, err := coll.Find(ctx, filter, options.Find().SetComment(comment).SetBatchSize(slowDocs))
		if err == nil {
			err = cur.Close(ctx)
		}
		done <- err
	}()
	awaitOp(t, client, comment)

	truncated := func(cmd bson.Raw) bool {
		text, ok := cmd.Lookup("$truncated").StringValueOK()
		if !ok {
			return false
		}
		if len(text) > 1000 || !strings.HasPrefix(text, `{ find: "truncated", `) || !strings.Contains(text, `$ne: "`+strings.Repeat("x", 150)+`..." }`) {
			t.Errorf("$truncated is %d bytes: %s", len(text), text)
		}
		if c, _ := cmd.Lookup("comment").StringValueOK(); c != comment {
			t.Errorf("truncated command's comment %v", cmd.Lookup("comment"))
		}
		return true
	}
	ops := currentOps(t, client, comment)
	if len(ops) != 1 || !truncated(ops[0].Lookup("command").Document()) {
		t.Fatalf("currentOp: %v, want the command truncated", ops)
	}
	stage := func(opts bson.D) bson.Raw {
		cur, err := client.Database("admin").Aggregate(t.Context(), mongo.Pipeline{
			{{Key: "$currentOp", Value: opts}}, {{Key: "$match", Value: bson.D{{Key: "command.comment", Value: comment}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(t.Context(), &docs); err != nil || len(docs) != 1 {
			t.Fatalf("$currentOp %v: %d operations, %v", opts, len(docs), err)
		}
		return docs[0].Lookup("command").Document()
	}
	if cmd := stage(bson.D{}); cmd.Lookup("filter").Type != bson.TypeEmbeddedDocument {
		t.Errorf("$currentOp by default: %v, want the command whole", cmd)
	}
	if cmd := stage(bson.D{{Key: "truncateOps", Value: true}}); !truncated(cmd) {
		t.Errorf("$currentOp with truncateOps: %v, want it truncated", cmd)
	}
	cancel()
	<-done
}

// TestCurrentOpGetMoreCursor: a running getMore shows the cursor it reads
// under "cursor", with the command that opened it (originatingCommand),
// as MongoDB's CurOp reports its generic cursor, so that currentOp can
// find a getMore by the find's comment (jstests awaitdata_getmore_cmd.js).
func TestCurrentOpGetMoreCursor(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "tail", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096)); err != nil {
		t.Fatal(err)
	}
	tail := db.Collection("tail")
	if _, err := tail.InsertOne(ctx, bson.D{{Key: "x", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	// find and getMore in one session: the driver's implicit ones differ.
	sctx := sessionCtx(t, client)
	reply, err := db.RunCommand(sctx, bson.D{{Key: "find", Value: "tail"}, {Key: "filter", Value: bson.D{{Key: "x", Value: 1}}},
		{Key: "tailable", Value: true}, {Key: "awaitData", Value: true}, {Key: "comment", Value: "getmore_cursor"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	id := reply.Lookup("cursor", "id").Int64()
	done := make(chan error, 1)
	go func() {
		done <- db.RunCommand(sctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "tail"}, {Key: "maxTimeMS", Value: 20000}}).Err()
	}()
	admin := client.Database("admin")
	var op bson.Raw
	for i := 0; i < 400 && op == nil; i++ {
		var out struct{ Inprog []bson.Raw }
		if err := admin.RunCommand(ctx, bson.D{{Key: "currentOp", Value: 1}, {Key: "op", Value: "getmore"},
			{Key: "cursor.originatingCommand.comment", Value: "getmore_cursor"}}).Decode(&out); err != nil {
			t.Fatal(err)
		}
		if len(out.Inprog) == 1 {
			op = out.Inprog[0]
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if op == nil {
		select {
		case err := <-done:
			t.Fatalf("getMore ended: %v", err)
		default:
		}
		all, _ := admin.RunCommand(ctx, bson.D{{Key: "currentOp", Value: 1}}).Raw()
		t.Fatalf("currentOp does not find the getMore by its cursor's originating command: %s", all)
	}
	c := op.Lookup("cursor").Document()
	if c.Lookup("cursorId").Int64() != id || !c.Lookup("tailable").Boolean() || !c.Lookup("awaitData").Boolean() ||
		c.Lookup("originatingCommand", "find").StringValue() != "tail" || c.Lookup("operationUsingCursorId").Int64() != op.Lookup("opid").Int64() {
		t.Fatalf("getMore's cursor: %s", c)
	}
	if _, err := tail.InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestCurrentOpStageSpecErrors: MongoDB checks a $currentOp stage in two
// passes, its lite parse (a spec that is not a document, a non-boolean
// allUsers or localOps: TypeMismatch), then the stage's parse (any
// namespace but admin's {aggregate: 1}: InvalidNamespace; another
// non-boolean option or an unknown one: FailedToParse)
// (document_source_current_op.cpp; sharding/aggregation_currentop.js).
func TestCurrentOpStageSpecErrors(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	const nsMsg = "$currentOp must be run against the 'admin' database with {aggregate: 1}"
	for _, c := range []struct {
		db     string
		target any
		spec   any
		code   int
		name   string
		msg    string
	}{
		{"admin", 1, 1, 14, "TypeMismatch", "$currentOp options must be specified in an object, but found: int"},
		{"admin", 1, "x", 14, "TypeMismatch", "$currentOp options must be specified in an object, but found: string"},
		{"admin", 1, bson.D{{Key: "allUsers", Value: 1}}, 14, "TypeMismatch",
			"The 'allUsers' parameter of the $currentOp stage must be a boolean value, but found: int"},
		{"admin", 1, bson.D{{Key: "localOps", Value: "yes"}}, 14, "TypeMismatch",
			"The 'localOps' parameter of the $currentOp stage must be a boolean value, but found: string"},
		// the lite parse comes before the namespace check
		{testDB, 1, bson.D{{Key: "allUsers", Value: 1}}, 14, "TypeMismatch",
			"The 'allUsers' parameter of the $currentOp stage must be a boolean value, but found: int"},
		{"admin", "collname", bson.D{}, 73, "InvalidNamespace", nsMsg},
		{testDB, "collname", bson.D{}, 73, "InvalidNamespace", nsMsg},
		{testDB, 1, bson.D{}, 73, "InvalidNamespace", nsMsg},
		// the namespace check comes before the options'
		{"admin", "collname", bson.D{{Key: "idleCursors", Value: 1}}, 73, "InvalidNamespace", nsMsg},
		{"admin", 1, bson.D{{Key: "idleCursors", Value: 1}}, 9, "FailedToParse",
			"The 'idleCursors' parameter of the $currentOp stage must be a boolean value, but found: int"},
		{"admin", 1, bson.D{{Key: "bogus", Value: true}}, 9, "FailedToParse", "Unrecognized option 'bogus' in $currentOp stage."},
	} {
		cmd := bson.D{{Key: "aggregate", Value: c.target},
			{Key: "pipeline", Value: bson.A{bson.D{{Key: "$currentOp", Value: c.spec}}}}, {Key: "cursor", Value: bson.D{}}}
		err := client.Database(c.db).RunCommand(ctx, cmd).Err()
		t.Run(c.db+" "+bson.Raw(mustRaw(t, bson.D{{Key: "s", Value: c.spec}})).String(), func(t *testing.T) {
			requireError(t, err, c.code, c.name, c.msg)
		})
	}
}

// TestCurrentOpReportsClientAndPlan: an operation's report carries, in the
// order of MongoDB's reportCurrentOpForClient and CurOp::reportState, its
// client's application name and handshake metadata, the time of the
// report, and the plan it runs (planSummary) while it runs; an idle
// connection ($all) carries the client's fields too.
// (core/administrative/current_op/currentop_find.js, the currentOp output
// fields of the manual.)
// https://www.mongodb.com/docs/v7.0/reference/command/currentOp/#output-fields
func TestCurrentOpReportsClientAndPlan(t *testing.T) {
	client, in := startBounded(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("slow")
	seedSlow(t, coll)
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "g", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	app := dial(t, in, options.Client().SetAppName("opctx-app"))
	const comment = "report-client-plan"
	errc := make(chan error, 1)
	go func() {
		filter := bson.D{{Key: "g", Value: bson.D{{Key: "$gte", Value: 0}}}, {Key: "$expr", Value: slowExpr()}}
		cur, err := app.Database(testDB).Collection("slow").Find(ctx, filter,
			options.Find().SetComment(comment).SetHint(bson.D{{Key: "g", Value: 1}}).SetBatchSize(slowDocs))
		if err == nil {
			err = cur.Close(ctx)
		}
		errc <- err
	}()
	opid := awaitOp(t, client, comment)
	// the plan shows once the find has chosen it
	var op bson.Raw
	before := time.Now()
	for deadline := time.Now().Add(10 * time.Second); op == nil; {
		ops := currentOps(t, client, comment)
		if len(ops) != 1 {
			t.Fatalf("currentOp: %v, want the find", ops)
		}
		if ops[0].Lookup("planSummary").Type != 0 || time.Now().After(deadline) {
			op = ops[0]
		}
	}
	want := []string{"type", "host", "desc", "connectionId", "client", "appName", "clientMetadata", "active", "currentOpTime"}
	if testAuth() && in.AuthEnabled() {
		want = append(want, "effectiveUsers")
	}
	want = append(want, "opid", "lsid", "secs_running", "microsecs_running", "op", "ns", "command", "planSummary", "locks", "waitingForLock")
	var keys []string
	elems, _ := op.Elements()
	for _, e := range elems {
		keys = append(keys, e.Key())
	}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("fields %v, want %v", keys, want)
	}
	if got, _ := op.Lookup("appName").StringValueOK(); got != "opctx-app" {
		t.Errorf("appName %q", got)
	}
	if got, _ := op.Lookup("clientMetadata", "application", "name").StringValueOK(); got != "opctx-app" {
		t.Errorf("clientMetadata %v, want the handshake's", op.Lookup("clientMetadata"))
	}
	if _, ok := op.Lookup("clientMetadata", "driver", "name").StringValueOK(); !ok {
		t.Errorf("clientMetadata %v, want the handshake's driver", op.Lookup("clientMetadata"))
	}
	opTime, _ := op.Lookup("currentOpTime").StringValueOK()
	at, err := time.Parse("2006-01-02T15:04:05.000-0700", opTime)
	if err != nil || at.Before(before.Add(-time.Minute)) || at.After(time.Now().Add(time.Minute)) {
		t.Errorf("currentOpTime %v: %v %v", op.Lookup("currentOpTime"), at, err)
	}
	if got, _ := op.Lookup("planSummary").StringValueOK(); got != "IXSCAN { g: 1 }" {
		t.Errorf("planSummary %q, want IXSCAN { g: 1 }", got)
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; serverCode(err) != 11601 {
		t.Fatalf("killed find: %v", err)
	}
	var idle struct{ Inprog []bson.Raw }
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "currentOp", Value: 1}, {Key: "$all", Value: true},
		{Key: "active", Value: false}, {Key: "appName", Value: "opctx-app"}}).Decode(&idle); err != nil {
		t.Fatal(err)
	}
	if len(idle.Inprog) == 0 {
		t.Fatal("no idle connection of opctx-app")
	}
	for _, d := range idle.Inprog {
		if name, _ := d.Lookup("clientMetadata", "application", "name").StringValueOK(); name != "opctx-app" || d.Lookup("currentOpTime").Type != bson.TypeString {
			t.Errorf("idle connection %v, want its client metadata and the time", d)
		}
	}
}

// TestCurrentOpStageExplained: explain shows a $currentOp stage as
// MongoDB's serialize writes it, only the options set away from their
// defaults, not the operations it listed
// (sharding/aggregation_currentop.js).
func TestCurrentOpStageExplained(t *testing.T) {
	client, _ := startServer(t)
	for _, c := range []struct{ spec, want string }{
		{`{"idleConnections": true, "allUsers": false}`, `{"idleConnections": true}`},
		{`{}`, `{}`},
		{`{"idleCursors": true, "idleSessions": false, "truncateOps": true, "allUsers": true, "localOps": true, "idleConnections": false}`,
			`{"idleSessions": false, "allUsers": true, "localOps": true, "truncateOps": true, "idleCursors": true}`},
	} {
		var spec bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(c.spec), false, &spec); err != nil {
			t.Fatal(err)
		}
		out, err := client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "aggregate", Value: 1},
			{Key: "pipeline", Value: bson.A{bson.D{{Key: "$currentOp", Value: spec}}, bson.D{{Key: "$match", Value: bson.D{{Key: "desc", Value: "test"}}}}}},
			{Key: "explain", Value: true}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		var want bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(`{"$currentOp": `+c.want+`}`), false, &want); err != nil {
			t.Fatal(err)
		}
		if got, _ := out.Lookup("stages", "0").DocumentOK(); !bytes.Equal(got, want) {
			t.Errorf("%s: first stage %s, want %s", c.spec, got, want)
		}
		if name, _ := out.Lookup("stages", "1").Document().IndexErr(0); name.Key() != "$match" {
			t.Errorf("%s: stages %s", c.spec, out.Lookup("stages"))
		}
	}
}

// TestCurrentOpIdleSessionReport: an open transaction no command runs in
// is reported as MongoDB's reportStashedState does: the client of its
// last command, its lsid, and its statistics (parameters with the read
// concern it began with, the read timestamp, its start and expiry —
// transactionLifetimeLimitSeconds after the start — and how long it has
// been open, active and inactive), in that order
// (sharding/aggregation_currentop.js).
func TestCurrentOpIdleSessionReport(t *testing.T) {
	in := startInstance(t, replSetConfig())
	client := dial(t, in, options.Client().SetAppName("txn-app"))
	ctx := context.Background()
	coll := client.Database(testDB).Collection("idle")
	res, err := client.Database(testDB).RunCommand(ctx, bson.D{{Key: "insert", Value: "idle"}, {Key: "documents", Value: bson.A{bson.D{}}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	before := res.Lookup("operationTime")
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := sess.StartTransaction(options.Transaction().SetReadConcern(readconcern.Snapshot())); err != nil {
		t.Fatal(err)
	}
	sctx := mongo.NewSessionContext(ctx, sess)
	if _, err := coll.InsertOne(sctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	defer sess.AbortTransaction(ctx)
	cur, err := client.Database("admin").Aggregate(ctx, bson.A{bson.D{{Key: "$currentOp", Value: bson.D{}}},
		bson.D{{Key: "$match", Value: bson.D{{Key: "type", Value: "idleSession"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil || len(docs) != 1 {
		t.Fatalf("idle sessions %v %v, want the transaction", docs, err)
	}
	d := docs[0]
	keys := func(doc bson.Raw) string {
		var out []string
		elems, _ := doc.Elements()
		for _, e := range elems {
			out = append(out, e.Key())
		}
		return strings.Join(out, " ")
	}
	if got := keys(d); got != "type host desc client connectionId appName clientMetadata lsid transaction waitingForLock active" {
		t.Errorf("fields %q", got)
	}
	if app, _ := d.Lookup("appName").StringValueOK(); app != "txn-app" {
		t.Errorf("appName %v", d.Lookup("appName"))
	}
	txn := d.Lookup("transaction").Document()
	if got := keys(txn); got != "parameters readTimestamp startWallClockTime timeOpenMicros timeActiveMicros timeInactiveMicros expiryTime" {
		t.Errorf("transaction fields %q", got)
	}
	if got := txn.Lookup("parameters").String(); got != `{"txnNumber": {"$numberLong":"1"},"autocommit": false,"readConcern": {"level": "snapshot"}}` {
		t.Errorf("parameters %s", got)
	}
	bt, bi := before.Timestamp()
	if rt, ri := txn.Lookup("readTimestamp").Timestamp(); rt < bt || rt == bt && ri < bi {
		t.Errorf("readTimestamp %v before the insert's operationTime %v", txn.Lookup("readTimestamp"), before)
	}
	const layout = "2006-01-02T15:04:05.000-0700"
	start, err1 := time.Parse(layout, txn.Lookup("startWallClockTime").StringValue())
	expiry, err2 := time.Parse(layout, txn.Lookup("expiryTime").StringValue())
	if err1 != nil || err2 != nil || expiry.Sub(start) != time.Minute || time.Since(start) > time.Minute {
		t.Errorf("start %v, expiry %v (%v %v), want a minute apart", start, expiry, err1, err2)
	}
	open, active, inactive := txn.Lookup("timeOpenMicros").Int64(), txn.Lookup("timeActiveMicros").Int64(), txn.Lookup("timeInactiveMicros").Int64()
	if active <= 0 || inactive <= 0 || open != active+inactive {
		t.Errorf("open %d, active %d, inactive %d", open, active, inactive)
	}
}
