package commands

import (
	"bytes"
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(applyOpsCmd, applyOpsSpec, "applyOps")
}

// applyOpsSpec declares applyOps's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/applyOps/
var applyOpsSpec = &argSpec{path: "applyOps", open: "MongoDB's declaration of it is not strict: it ignores fields it does not know", fields: []argField{
	arg("bypassDocumentValidation", tBool),
	// alwaysUpsert: absent or null, updates are upserts; false, they are
	// not; true is refused with MongoDB's own code, as MongoDB 6.2+
	// refuses it.
	arg("alwaysUpsert", tAny),
	arg("preCondition", tAny),
	arg("prepare", tAny),
	arg("partialTxn", tAny),
	arg("count", tAny),
	ignore("allowAtomic", tAny, "MongoDB applies the operations one by one since 6.2 and ignores it"),
}}

// maxApplyOpsDepth is how deep applyOps entries may nest applyOps, as in
// MongoDB.
const maxApplyOpsDepth = 10

// applyOpsCmd applies oplog entries, as mongorestore --oplogReplay sends
// them: one by one, not atomically. An insert of an _id that exists
// replaces the document, an update is an upsert (as MongoDB applies
// updates before 8.1, SERVER-88158) unless alwaysUpsert is false, when
// one that matches nothing fails only its entry (results false, and the
// command then fails with UnknownError), as does an insert refused other
// than as a duplicate _id (by the validator), a delete of nothing succeeds,
// and any other error stops the command, with the entries applied so far
// in its reply.
func applyOpsCmd(s *Service, r *Request) (bson.Raw, error) {
	c := &r.args
	upsert := c.value("alwaysUpsert")
	switch {
	case upsert.Type != 0 && upsert.Type != bson.TypeNull && upsert.Type != bson.TypeBoolean:
		return nil, wrongType("applyOps", "alwaysUpsert", upsert, "bool")
	case upsert.Type == bson.TypeBoolean && upsert.Boolean():
		return nil, mongoerr.New(mongoerr.ApplyOpsAlwaysUpsert, "applyOps command no longer supports the 'alwaysUpsert' option")
	case c.has("preCondition"):
		return nil, mongoerr.New(mongoerr.ApplyOpsPreCondition, "applyOps command no longer supports the 'preCondition' option")
	case c.has("prepare"):
		return nil, mongoerr.New(mongoerr.BadValue, "applyOps command can't have 'prepare' field")
	}
	if err := refuseTxnFields(c.value("partialTxn"), c.value("count")); err != nil {
		return nil, err
	}
	ops, err := parseApplyOpsCmd(r.args.first(), upsert)
	if err != nil {
		return nil, err
	}
	return s.applyOps(r, ops)
}

// refuseTxnFields refuses an applyOps command, or a nested applyOps entry's
// o, with the fields only a transaction's oplog entry carries: partialTxn
// and count (MongoDB's ApplyOpsCommandInfo; jstests/replsets'
// transaction-entries-through-applyOps test feeds a partial entry and an
// implicit commit entry back and expects 31056 and 31240).
func refuseTxnFields(partialTxn, count bson.RawValue) error {
	switch {
	case partialTxn.Type != 0:
		return mongoerr.New(mongoerr.ApplyOpsPartialTxn, "applyOps command can't have 'partialTxn' field.")
	case count.Type != 0 && !values.IsNumber(count.Type):
		return wrongType("applyOps", "count", count, "long")
	case count.Type != 0:
		return mongoerr.New(mongoerr.ApplyOpsCount, "applyOps command can't have 'count' field.")
	}
	return nil
}

// parseApplyOpsCmd parses an applyOps command's entries, its updates
// upserts unless alwaysUpsert is false.
func parseApplyOpsCmd(entries, alwaysUpsert bson.RawValue) ([]applyOp, error) {
	ops, err := parseApplyOps(entries, 0)
	if err == nil {
		upsertUpdates(ops, alwaysUpsert.Type != bson.TypeBoolean)
	}
	return ops, err
}

// upsertUpdates makes the update entries of ops upserts when all is set
// (alwaysUpsert not false); a nested applyOps has its own alwaysUpsert,
// not given, so its updates are upserts.
func upsertUpdates(ops []applyOp, all bool) {
	for i := range ops {
		if ops[i].kind == 'u' && all {
			ops[i].upsert = true
		}
		upsertUpdates(ops[i].nested, true)
	}
}

// applyOp is one parsed applyOps entry.
type applyOp struct {
	kind     byte // i, u, d, c or n
	db, coll string
	o, o2    bson.Raw
	ui       bson.RawValue
	upsert   bool // b
	// nested are the entries of a nested applyOps command entry.
	nested []applyOp
}

// parseApplyOps reads and checks every entry of an applyOps command's
// array (v) before any is applied, as MongoDB's checks do: types, namespaces and
// the commands entries name. What only applying can tell (a collection
// that does not exist, a missing _id) fails the entry when it comes.
func parseApplyOps(v bson.RawValue, depth int) ([]applyOp, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, wrongType("applyOps", "applyOps", v, "array")
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid applyOps array: %v", err)
	}
	ops := make([]applyOp, len(vals))
	for i, v := range vals {
		if ops[i], err = parseApplyOp(v, depth); err != nil {
			return nil, err
		}
		if ops[i].kind == 'c' && cmdName(ops[i].o) == "dropDatabase" && (len(vals) > 1 || depth > 0) {
			return nil, mongoerr.New(mongoerr.ApplyOpsDropDatabaseAlone, "dropDatabase in an applyOps must be the only entry")
		}
	}
	return ops, nil
}

// parseApplyOp reads one entry.
func parseApplyOp(v bson.RawValue, depth int) (applyOp, error) {
	var op applyOp
	e, ok := v.DocumentOK()
	if !ok {
		return op, mongoerr.New(mongoerr.TypeMismatch, "applyOps entries must be objects, found %s", values.TypeName(v.Type))
	}
	kind := e.Lookup("op")
	switch {
	case kind.Type == 0:
		return op, mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"op\"")
	case kind.Type != bson.TypeString:
		return op, mongoerr.New(mongoerr.TypeMismatch, "wrong type for field (op) %s != string", values.TypeName(kind.Type))
	case kind.StringValue() == "n":
		op.kind = 'n'
		return op, nil
	case kind.StringValue() == "":
		return op, mongoerr.New(mongoerr.IllegalOperation, "applyOps entry has an empty op")
	}
	ns, ok := e.Lookup("ns").StringValueOK()
	if !ok || ns == "" {
		return op, mongoerr.New(mongoerr.IllegalOperation, "applyOps entry of op '%s' needs a non-empty ns string", kind.StringValue())
	}
	switch k := kind.StringValue(); k {
	case "i", "u", "d", "c":
		op.kind = k[0]
	default:
		return op, mongoerr.New(mongoerr.BadValue, "Unrecognized op type '%s' in applyOps entry", printableName(k))
	}
	op.db, op.coll, _ = strings.Cut(ns, ".")
	o := e.Lookup("o")
	switch {
	case o.Type == 0:
		return op, mongoerr.MissingField("OplogEntryBase.o")
	case o.Type != bson.TypeEmbeddedDocument:
		return op, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'OplogEntryBase.o' is the wrong type '%s', expected type 'object'", values.TypeName(o.Type))
	}
	op.o = o.Document()
	if o2 := e.Lookup("o2"); o2.Type != 0 {
		if op.o2, ok = o2.DocumentOK(); !ok {
			return op, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'OplogEntryBase.o2' is the wrong type '%s', expected type 'object'", values.TypeName(o2.Type))
		}
	}
	if op.kind == 'u' && op.o2 == nil {
		return op, mongoerr.New(mongoerr.NoSuchKey, "applyOps update entry is missing its o2 field")
	}
	if b := e.Lookup("b"); b.Type != 0 {
		if op.upsert, ok = b.BooleanOK(); !ok {
			return op, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'OplogEntryBase.b' is the wrong type '%s', expected type 'bool'", values.TypeName(b.Type))
		}
	}
	if op.ui = e.Lookup("ui"); op.ui.Type != 0 {
		if sub, data, ok := op.ui.BinaryOK(); !ok || sub != bson.TypeBinaryUUID || len(data) != 16 {
			return op, mongoerr.New(mongoerr.InvalidUUID, "applyOps entry's ui must be a UUID")
		}
	}
	if op.kind == 'c' {
		return op, checkCommandOp(&op, depth)
	}
	return op, nil
}

// oplogCommands are the commands MongoDB's oplog holds that Folio does
// not apply: refused with NotImplemented, naming them. The two-phase
// index build entries MongoDB itself refuses in applyOps.
var (
	oplogCommandsRefused = map[string]string{
		"emptycapped":      "Folio has no emptycapped",
		"importCollection": "Folio cannot import a collection's files",
		"dbCheck":          "Folio has no dbCheck",
	}
	indexBuildEntries = map[string]bool{"startIndexBuild": true, "commitIndexBuild": true, "abortIndexBuild": true}
	oplogCommands     = map[string]bool{"create": true, "drop": true, "dropDatabase": true, "renameCollection": true,
		"collMod": true, "createIndexes": true, "dropIndexes": true, "deleteIndexes": true, "deleteIndex": true, "applyOps": true,
		"convertToCapped": true}
)

// checkCommandOp checks a command entry: a command the oplog holds, in
// the oplog's form; a nested applyOps is parsed in turn.
func checkCommandOp(op *applyOp, depth int) error {
	name := cmdName(op.o)
	switch {
	case name == "":
		return mongoerr.New(mongoerr.InvalidNamespace, "applyOps command entry has an empty o")
	case indexBuildEntries[name]:
		return mongoerr.New(mongoerr.CommandNotSupported, "Applying '%s' through applyOps is not supported", name)
	case oplogCommandsRefused[name] != "":
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not apply the oplog command '%s' (%s)", name, oplogCommandsRefused[name])
	case !oplogCommands[name]:
		return mongoerr.New(mongoerr.FailedToParse, "Unrecognized command in op: %s", printableName(name))
	case name == "applyOps":
		if depth+1 >= maxApplyOpsDepth {
			return mongoerr.New(mongoerr.FailedToParse, "Too many nested applyOps")
		}
		if err := refuseTxnFields(op.o.Lookup("partialTxn"), op.o.Lookup("count")); err != nil {
			return err
		}
		var err error
		op.nested, err = parseApplyOps(op.o.Index(0).Value(), depth+1)
		return err
	}
	return nil
}

// cmdName is a command document's name, its first field's.
func cmdName(o bson.Raw) string {
	el, err := o.IndexErr(0)
	if err != nil {
		return ""
	}
	return el.Key()
}

// printableName is a name from a client as a message shows it.
func printableName(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// applyOps applies parsed entries in order and builds the reply:
// applied counts the entries other than no-ops that ran, results says
// which succeeded.
func (s *Service) applyOps(r *Request, ops []applyOp) (bson.Raw, error) {
	results := bson.A{}
	applied, failed := int32(0), 0
	extra := func() bson.D {
		return bson.D{{Key: "applied", Value: applied}, {Key: "results", Value: results}}
	}
	for _, op := range ops {
		if op.kind == 'n' {
			continue
		}
		err := mongoerr.Interruption(r.Ctx)
		if err == nil {
			err = s.applyOne(r, op)
		}
		applied++
		results = append(results, err == nil)
		var ef entryFailure
		switch {
		case err == nil:
		case errors.As(err, &ef):
			// the entry fails, and the command goes on
			failed++
		default:
			me := *mongoerr.As(err)
			me.Extra = append(extra(), me.Extra...)
			return nil, &me
		}
	}
	if failed > 0 {
		return nil, &mongoerr.Error{Code: mongoerr.UnknownError, Msg: "applyOps had one or more errors applying ops", Extra: extra()}
	}
	return marshal(extra()), nil
}

// entryFailure is an entry's error that fails only that entry (MongoDB's
// applyOperation_inlock returns it as a status rather than throwing): an
// update that matches nothing, an insert refused other than as a duplicate
// _id (by the validator, say).
type entryFailure struct{ error }

func (e entryFailure) Unwrap() error { return e.error }

// applyOne applies one entry other than a no-op.
func (s *Service) applyOne(r *Request, op applyOp) error {
	if op.kind == 'c' {
		return s.applyCommandOp(r, op)
	}
	if err := engine.ValidateDBName(op.db); err != nil {
		return mongoerr.New(mongoerr.InvalidNamespace, "invalid ns: %s.%s", op.db, op.coll)
	}
	if err := engine.ValidateCollName(op.db, op.coll); err != nil {
		return mongoerr.New(mongoerr.InvalidNamespace, "invalid ns: %s.%s", op.db, op.coll)
	}
	c := s.Engine.Collection(op.db, op.coll)
	if op.ui.Type != 0 {
		if _, data := op.ui.Binary(); c == nil || !bytes.Equal(c.UUID[:], data) {
			return mongoerr.New(mongoerr.ApplyOpsUUIDMismatch, "Namespace '%s.%s' and UUID '%s' point to different collections", op.db, op.coll, op.ui)
		}
	}
	// a view is refused before the collection is looked for, as
	// AutoGetCollection refuses views (CommandNotSupportedOnView); system.views
	// takes the writes that define views, as the oplog logs them
	if err := s.notOnView(r, op.db, op.coll); err != nil {
		return err
	}
	if c == nil {
		if op.kind == 'd' {
			return nil // deleting from a collection that is not there: done
		}
		return mongoerr.New(mongoerr.NamespaceNotFound, "cannot apply insert or update operation on a non-existent namespace %s.%s: %s", op.db, op.coll, op.o)
	}
	wo := writeOptions(s, r, &r.args)
	switch op.kind {
	case 'i':
		id := op.o.Lookup("_id")
		if id.Type == 0 {
			return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"_id\"")
		}
		_, werrs, err := s.Engine.Insert(op.db, op.coll, []bson.Raw{op.o}, true, wo)
		if err != nil {
			return err
		}
		if len(werrs) == 0 {
			return nil
		}
		if err = werrs[0].Err; !mongoerr.Is(err, mongoerr.DuplicateKey) {
			return entryFailure{err}
		}
		// An insert of an _id that exists replaces the document, as
		// MongoDB applies inserts (a unique index other than _id's still
		// fails it).
		filter := bsoncore.NewDocumentBuilder().AppendValue("_id", bsoncore.Value{Type: bsoncore.Type(id.Type), Data: id.Value}).Build()
		_, err = s.Engine.Update(op.db, op.coll, engine.UpdateSpec{Filter: bson.Raw(filter), Update: op.o, Upsert: true, WriteOptions: wo})
		return err
	case 'u':
		if op.o2.Lookup("_id").Type == 0 {
			return mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"_id\" in o2")
		}
		u := engine.UpdateSpec{Filter: op.o2, Update: op.o, Upsert: op.upsert, WriteOptions: wo}
		if first, err := op.o.IndexErr(0); err == nil && first.Key() == "$v" {
			diff, ok := op.o.Lookup("diff").DocumentOK()
			if v, _ := first.Value().AsInt64OK(); v != 2 || !ok {
				return mongoerr.New(mongoerr.FailedToParse, "Unsupported update oplog entry: %s", op.o)
			}
			u.Update, u.OplogDiff = diff, true
		}
		res, err := s.Engine.Update(op.db, op.coll, u)
		if err == nil && res.Matched == 0 && res.UpsertedID.Type == 0 {
			return entryFailure{mongoerr.New(mongoerr.UpdateOperationFailed, "Failed to apply update: no document matches %s in %s.%s", op.o2, op.db, op.coll)}
		}
		return err
	default: // 'd'
		_, err := s.Engine.Delete(op.db, op.coll, op.o, 1, bson.RawValue{}, wo)
		return err
	}
}

// applyCommandOp runs a command entry as the command it logs (see
// oplogCommand), checking that its ui names the collection it concerns; a
// create entry's ui is the UUID the collection is created with.
func (s *Service) applyCommandOp(r *Request, op applyOp) error {
	if err := engine.ValidateDBName(op.db); err != nil {
		return err
	}
	if op.nested != nil || cmdName(op.o) == "applyOps" {
		_, err := s.applyOps(r, op.nested)
		return err
	}
	name, sub := oplogCommand(op)
	if name == "create" && op.ui.Type != 0 {
		// the collection is created with the entry's UUID
		var uuid [16]byte
		_, data := op.ui.Binary()
		copy(uuid[:], data)
		sub.createUUID = &uuid
	} else if op.ui.Type != 0 {
		coll, _ := op.o.Index(0).Value().StringValueOK()
		if name == "renameCollection" {
			coll = strings.TrimPrefix(coll, op.db+".")
		}
		c := s.Engine.Collection(op.db, coll)
		if _, data := op.ui.Binary(); c == nil || !bytes.Equal(c.UUID[:], data) {
			return mongoerr.New(mongoerr.ApplyOpsUUIDMismatch, "Namespace '%s.%s' and UUID '%s' point to different collections", op.db, coll, op.ui)
		}
	}
	h := handlers[name]
	sub.Conn, sub.Args, sub.Ctx, sub.op, sub.fromOplog = r.Conn, r.Args, r.Ctx, r.op, true
	var err error
	if sub.args, err = parseCommand(sub.Cmd, h.spec); err != nil {
		return err
	}
	_, err = h.h(s, sub)
	return err
}

// oplogCommand is the command a (checked) command entry logs, and its
// name: the entry's o, but that a createIndexes entry holds one index's
// spec beside the collection, built as logged (a spec without a collation
// has the simple one, not the collection's default: the log holds the
// collation the index resolved to), deleteIndex is deleteIndexes,
// renameCollection runs against admin and its dropTarget may be the
// dropped collection's UUID.
func oplogCommand(op applyOp) (string, *Request) {
	name, cmd, db := cmdName(op.o), op.o, op.db
	first := op.o.Index(0).Value()
	switch name {
	case "createIndexes":
		spec := bsoncore.NewDocumentBuilder()
		for _, e := range rest(op.o) {
			v := e.Value.(bson.RawValue)
			spec.AppendValue(e.Key, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
		if op.o.Lookup("collation").Type == 0 && !isV1Index(op.o.Lookup("v")) {
			spec.AppendDocument("collation", bsoncore.NewDocumentBuilder().AppendString("locale", "simple").Build())
		}
		cmd = marshal(bson.D{{Key: name, Value: first}, {Key: "indexes", Value: bson.A{bson.Raw(spec.Build())}}})
	case "deleteIndex":
		name = "deleteIndexes"
		cmd = marshal(append(bson.D{{Key: name, Value: first}}, rest(op.o)...))
	case "renameCollection":
		db = "admin"
		fields := rest(op.o)
		for i, e := range fields {
			if v := e.Value.(bson.RawValue); e.Key == "dropTarget" && v.Type == bson.TypeBinary {
				fields[i].Value = true
			}
		}
		cmd = marshal(append(bson.D{{Key: name, Value: first}}, fields...))
	}
	return name, &Request{DB: db, Cmd: cmd}
}

// isV1Index reports whether an index spec's v is 1: a version 1 index
// takes no collation.
func isV1Index(v bson.RawValue) bool {
	n, ok := v.AsFloat64OK()
	return ok && n == 1
}

// rest is every field of a document but its first, as elements.
func rest(d bson.Raw) bson.D {
	var out bson.D
	it := rawdoc.Iterate(d)
	it.Next()
	for {
		k, v, ok := it.Next()
		if !ok {
			return out
		}
		out = append(out, bson.E{Key: string(k), Value: v})
	}
}
