package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(findCmd, findSpec, "find")
	uncounted("find")
	namesCollection("find")
}

// findSpec declares find's fields; find_command.idl types its flags
// optionalBool and its documents object_owned_nonempty_serialize. MongoDB
// parses find as the struct FindCommandRequest, which its errors name.
// https://www.mongodb.com/docs/v7.0/reference/command/find/
var findSpec = &argSpec{path: "FindCommandRequest", fields: []argField{
	arg("filter", tOwnedObject),
	arg("sort", tOwnedObject),
	arg("projection", tOwnedObject),
	arg("skip", tSafe),
	arg("limit", tSafe),
	withDefault("batchSize", tSafe, noBatchSize),
	arg("singleBatch", tOptionalBool),
	arg("tailable", tOptionalBool),
	arg("awaitData", tOptionalBool),
	arg("allowDiskUse", tOptionalBool),
	arg("hint", tHint),
	arg("noCursorTimeout", tOptionalBool),
	arg("let", tDoc),
	// allowPartialResults means nothing but in a sharded cluster, whose
	// shards can be unavailable; a find on a view refuses it, as MongoDB's
	// asAggregationCommand does.
	arg("allowPartialResults", tOptionalBool),
	// readOnce is a storage cache hint, refused in a transaction.
	arg("readOnce", tOptionalBool),
	arg("returnKey", tOptionalBool),
	arg("showRecordId", tOptionalBool),
	ignore("oplogReplay", tBool, "ignored by MongoDB since 4.4: a scan of local.oplog.rs starts at its ts bound without it"),
	arg("$_requestResumeToken", tBool),
	arg("$_resumeAfter", tDoc),
	arg("min", tOwnedObject),
	arg("max", tOwnedObject),
	arg("collation", tOwnedObject),
	collectionUUIDField,
}}

// findArgs is a parsed find command.
type findArgs struct {
	engine.FindOptions
	batchSize int64 // noBatchSize when absent
	single    bool
	tailable  bool
	awaitData bool
	noTimeout bool
}

// parseFind reads a find command's parsed fields; allowDiskUse is the
// option's value when the command does not give it (allowDiskUseByDefault).
func parseFind(c *cmdArgs, allowDiskUse bool, clock expr.Clock) (findArgs, error) {
	a := findArgs{
		batchSize: c.safeInt("batchSize"), single: c.bool("singleBatch"), tailable: c.bool("tailable"),
		awaitData: c.bool("awaitData"), noTimeout: c.bool("noCursorTimeout"),
	}
	o := &a.FindOptions
	o.Filter, o.Sort, o.Projection = c.doc("filter"), c.doc("sort"), c.doc("projection")
	o.AllowDiskUse, o.Hint = c.boolOr("allowDiskUse", allowDiskUse), c.value("hint")
	o.Skip, o.Limit = c.safeInt("skip"), c.safeInt("limit")
	o.Collation = c.doc("collation")
	o.Min, o.Max = c.doc("min"), c.doc("max")
	o.ReturnKey, o.ShowRecordID = c.bool("returnKey"), c.bool("showRecordId")
	o.ResumeToken = c.bool("$_requestResumeToken")
	err := nonNegative("skip", o.Skip)
	if err == nil {
		err = nonNegative("limit", o.Limit)
	}
	if err == nil && c.has("batchSize") {
		err = nonNegative("batchSize", a.batchSize)
	}
	// validateFindCommandRequest, after the IDL's checks
	if err == nil && rawdoc.Len(o.Min) > 0 && rawdoc.Len(o.Max) > 0 && !rawdoc.SameKeys(o.Min, o.Max) {
		err = mongoerr.New(mongoerr.MinMaxFieldsDiffer, "min and max must have the same field names")
	}
	if err == nil {
		err = query.CheckNatural(o.Sort, "sort")
	}
	if err == nil {
		err = checkNaturalHint(o.Hint)
	}
	if err == nil && a.awaitData && !a.tailable {
		err = mongoerr.New(mongoerr.FailedToParse, "Cannot set 'awaitData' without also setting 'tailable'")
	}
	if err == nil && a.tailable && rawdoc.Len(o.Sort) > 0 && !naturalForward(o.Sort) {
		err = mongoerr.New(mongoerr.BadValue, "cannot use tailable option with a sort other than {$natural: 1}")
	}
	if err == nil && a.tailable && a.single {
		err = mongoerr.New(mongoerr.BadValue, "cannot use tailable option with the 'singleBatch' option")
	}
	if err == nil {
		err = checkResumable(c, o)
	}
	if let := c.doc("let"); err == nil && let != nil {
		// The variables are evaluated once the command has parsed.
		o.Let, err = expr.Bind(let, clock)
	}
	return a, err
}

func findCmd(s *Service, r *Request) (bson.Raw, error) {
	s.Ops.Query.Add(1)
	coll, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	a, err := parseFind(&r.args, s.allowDiskUseByDefault(), s.exprClock(r))
	if err != nil {
		return nil, err
	}
	if r.Txn != nil && a.tailable {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "It is illegal to open a tailable cursor in a transaction")
	}
	if r.Txn != nil && r.args.bool("readOnce") {
		return nil, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "The 'readOnce' option is not supported within a transaction.")
	}
	if err := txnReadAllowed(r, coll); err != nil {
		return nil, err
	}
	if err := s.checkCollectionUUID(r, &r.args, r.DB, coll); err != nil {
		return nil, err
	}
	// A view is read as an aggregate, which resolves its chain of views.
	if v, err := s.lookupView(r, r.DB, coll); err != nil || v != nil {
		if err != nil {
			return nil, err
		}
		return s.findView(r, coll, a)
	}
	b := &binding{r.Ctx, r.op}
	a.Ctx = b
	a.Let = s.withScripts(a.Let, r, b)
	if r.DB == engine.OplogDB && coll == engine.OplogColl && r.Txn == nil {
		return s.findOplog(r, coll, a, b)
	}
	if a.tailable && s.Engine.Collection(r.DB, coll) != nil {
		// (a collection that does not exist gives an empty batch and no
		// cursor, tailable or not, as in MongoDB)
		tc, err := s.Engine.Tail(r.DB, coll, a.FindOptions)
		if err != nil {
			return nil, err
		}
		return executorError(s.serveTailable(r, r.DB, coll, tc, b, a.batchSize, a.awaitData, a.noTimeout))
	}
	a.Txn = r.Txn
	cur, err := s.Engine.Find(r.DB, coll, a.FindOptions)
	if err != nil {
		return nil, err
	}
	fb := firstBatch{
		size: a.batchSize, defaultSize: defaultFirstBatch, single: a.single, noTimeout: a.noTimeout,
		empty: s.Engine.CollectionIn(r.Txn, r.DB, coll) == nil, expect: a.Limit,
	}
	if a.single {
		// A single batch without a batchSize is bounded by size only.
		fb.defaultSize = math.MaxInt64
	}
	return executorError(s.serveFirstBatch(r, r.DB, coll, cur, b, fb))
}

// executorError writes MongoDB's find command's context before an error of
// filling the first batch, which its plan executor raised
// (engine.FindExecutorContext).
func executorError(reply bson.Raw, err error) (bson.Raw, error) {
	if err != nil {
		return nil, mongoerr.AddContext(err, engine.FindExecutorContext)
	}
	return reply, nil
}

// findOplog is a find on local.oplog.rs: the oplog's entries in commit
// order, tailable as a capped collection's.
func (s *Service) findOplog(r *Request, coll string, a findArgs, b *binding) (bson.Raw, error) {
	cur, err := s.Engine.FindOplog(a.FindOptions, a.tailable)
	if err != nil {
		return nil, err
	}
	if a.tailable {
		return executorError(s.serveTailable(r, r.DB, coll, cur, b, a.batchSize, a.awaitData, a.noTimeout))
	}
	fb := firstBatch{size: a.batchSize, defaultSize: defaultFirstBatch, single: a.single, noTimeout: a.noTimeout, expect: a.Limit}
	if a.single {
		fb.defaultSize = math.MaxInt64
	}
	return executorError(s.serveFirstBatch(r, r.DB, coll, cur, b, fb))
}

// checkResumable is validateFindCommandRequest's check of a resumable
// scan: $_requestResumeToken asks for a forward natural scan, from the
// record $_resumeAfter names, which needs it; it sets o.ResumeAfter.
func checkResumable(c *cmdArgs, o *engine.FindOptions) error {
	after := c.doc("$_resumeAfter")
	if !o.ResumeToken {
		if rawdoc.Len(after) > 0 {
			return mongoerr.New(mongoerr.BadValue, "'requestResumeToken' must be true if 'resumeAfter' is specified")
		}
		return nil
	}
	if h, ok := o.Hint.DocumentOK(); !ok || !naturalForward(h) {
		return mongoerr.New(mongoerr.BadValue, "hint must be {$natural:1} if 'requestResumeToken' is enabled")
	}
	if rawdoc.Len(o.Sort) > 0 && !naturalForward(o.Sort) {
		return mongoerr.New(mongoerr.BadValue, "sort must be unset or {$natural:1} if 'requestResumeToken' is enabled")
	}
	if rawdoc.Len(after) == 0 {
		return nil
	}
	rid, err := after.LookupErr("$recordId")
	if rawdoc.Len(after) != 1 || err != nil || rid.Type != bson.TypeInt64 && rid.Type != bson.TypeBinary && rid.Type != bson.TypeNull {
		return mongoerr.New(mongoerr.BadValue, "Malformed resume token: the '_resumeAfter' object must contain exactly one field named '$recordId', of type NumberLong, BinData or jstNULL.")
	}
	o.ResumeAfter = rid
	return nil
}

// checkNaturalHint applies hasInvalidNaturalParam to a read's hint, as
// MongoDB's validateFindCommandRequest does when it parses a find or
// canonicalizes a count's or distinct's query: before the collection is
// read, so a missing one fails the same way.
func checkNaturalHint(hint bson.RawValue) error {
	if h, ok := hint.DocumentOK(); ok {
		return query.CheckNatural(h, "hint")
	}
	return nil
}

// naturalForward reports whether doc is {$natural: 1}, as MongoDB compares
// documents (any number type equal to 1).
func naturalForward(doc bson.Raw) bool {
	v := rawdoc.Lookup(doc, "$natural")
	return values.IsNumber(v.Type) && values.Compare(v, values.Int32Value(1)) == 0 && rawdoc.Len(doc) == 1
}
