package commands

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	register(createCmd, createSpec, "create")
	register(dropCmd, &argSpec{path: "drop", fields: []argField{collectionUUIDField}}, "drop")
	namesCollection("create", "drop")
	register(dropDatabaseCmd, &argSpec{path: "dropDatabase"}, "dropDatabase")
	register(listCollectionsCmd, listCollectionsSpec, "listCollections")
	registerAdmin(renameCollectionCmd, renameCollectionSpec, "renameCollection")
}

// listCollectionsCursor is the collection part of a listCollections
// cursor's namespace, as MongoDB names it.
const listCollectionsCursor = "$cmd.listCollections"

// listCollectionsSpec declares listCollections' fields, typed as
// list_collections.idl types them (nameOnly and authorizedCollections
// bool, includePendingDrops safeBool).
// https://www.mongodb.com/docs/v7.0/reference/command/listCollections/
var listCollectionsSpec = &argSpec{path: "listCollections", fields: []argField{
	arg("filter", tDoc),
	arg("nameOnly", tStrictBool),
	arg("cursor", tDoc),
	arg("authorizedCollections", tStrictBool),
	ignore("includePendingDrops", tBool, "Folio drops a collection at once: none is ever pending"),
}, subs: []*argSpec{listCollectionsCursorSpec}}

var listCollectionsCursorSpec = cursorSpec("listCollections")

// renameCollectionSpec declares renameCollection's fields;
// rename_collection.idl types stayTemp bool, and dropTarget a bool or the
// UUID the target must have (then it is dropped).
// https://www.mongodb.com/docs/v7.0/reference/command/renameCollection/
var renameCollectionSpec = &argSpec{path: "renameCollection", fields: []argField{
	required("to", tString),
	arg("dropTarget", tBoolOrUUID),
	collectionUUIDField,
	ignore("stayTemp", tStrictBool, "Folio refuses temporary collections (create's temp: true), so none is renamed"),
}}

// createCmd runs create. One that fails counts in no top figure: MongoDB's
// create records top only when it comes to make the collection or view
// (its AutoStatsTracker, in the creation's unit of work), and a creation
// failing there rolls back, the rollback forgetting the namespace's top
// entry (create_collection_fail_cleanup.js).
func createCmd(s *Service, r *Request) (bson.Raw, error) {
	reply, err := create(s, r)
	if err != nil && r.op != nil {
		r.op.notInTop = true
	}
	return reply, err
}

func create(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	if r.createUUID != nil && (r.args.has("viewOn") || r.args.has("pipeline") || r.args.has("timeseries") && !strings.HasPrefix(name, timeseries.BucketsPrefix)) {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not create a view or time series collection with a given UUID (applyOps create with ui)")
	}
	if err := s.checkCappedOptions(r); err != nil {
		return nil, err
	}
	if r.args.has("timeseries") {
		if err := checkTimeseriesCreateOptions(r, name); err != nil {
			return nil, err
		}
	}
	if r.args.has("viewOn") || r.args.has("pipeline") {
		return nil, createViewCmd(s, r, name)
	}
	opts, err := parseCreateOptions(&r.args, r.DB, name)
	if err != nil {
		return nil, err
	}
	if r.args.has("timeseries") {
		return nil, s.createTimeseries(r, name, opts)
	}
	if strings.HasPrefix(name, timeseries.BucketsPrefix) {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "Cannot create a buckets collection without timeseries options: %s.%s", r.DB, name)
	}
	if opts.Capped {
		// MongoDB rounds a capped collection's size up to a multiple of 256.
		opts.Size = (opts.Size + 255) / 256 * 256
	} else {
		opts.Size, opts.Max = 0, 0
	}
	if v, err := s.lookupView(r, r.DB, name); err != nil || v != nil {
		if err == nil {
			kind := "view"
			if strings.HasPrefix(v.viewOn, timeseries.BucketsPrefix) {
				kind = "timeseries collection"
			}
			err = mongoerr.New(mongoerr.NamespaceExists, "A %s already exists. NS: %s.%s", kind, r.DB, name)
		}
		return nil, err
	}
	switch {
	case r.Txn != nil && strings.HasPrefix(name, "system."):
		// createCollection
		err = mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create system collection %s.%s within a transaction.", r.DB, name)
	case r.Txn != nil:
		err = r.Txn.CreateCollection(r.DB, name, opts)
	case r.createUUID != nil:
		err = s.Engine.CreateCollectionWithUUID(r.DB, name, opts, *r.createUUID)
	default:
		err = s.Engine.CreateCollection(r.DB, name, opts)
	}
	if err != nil || opts.AutoIndexID == nil {
		return nil, err
	}
	// create's reply notes the option, true or false, whenever given
	return marshal(bson.D{{Key: "note", Value: autoIndexIDNote}}), nil
}

// checkCappedOptions applies create's first rules, on capped, size and
// max, which MongoDB's CmdCreate::typedRun checks before any other option:
// without clusteredIndex (given in any form), capped: true needs a size,
// and a size or max needs capped: true; with it, a capped collection
// needs the enableTestCommands parameter (6127800), size (6049200) and
// max (6049204) are refused, and capped needs expireAfterSeconds
// (6049201).
func (s *Service) checkCappedOptions(r *Request) error {
	capped := r.args.bool("capped")
	if !r.args.has("clusteredIndex") {
		switch {
		case capped && !r.args.has("size"):
			return mongoerr.New(mongoerr.InvalidOptions, "the 'size' field is required when 'capped' is true")
		case !capped && (r.args.has("size") || r.args.has("max")):
			return mongoerr.New(mongoerr.InvalidOptions, "the 'capped' field needs to be true when either the 'size' or 'max' fields are present")
		}
		return nil
	}
	const meant = "Did you mean 'capped: true' with 'expireAfterSeconds'?"
	switch {
	case capped && !s.TestCommands:
		return mongoerr.New(mongoerr.ClusteredCappedTestOnly, "Clustered capped collection only available with 'enableTestCommands' server parameter")
	case r.args.has("size"):
		return mongoerr.New(mongoerr.ClusteredSize, "'size' field for capped collections is not allowed on clustered collections. "+meant)
	case r.args.has("max"):
		return mongoerr.New(mongoerr.ClusteredMax, "'max' field for capped collections is not allowed on clustered collections. "+meant)
	case capped && !r.args.has("expireAfterSeconds"):
		return mongoerr.New(mongoerr.ClusteredCappedNoTTL, "A capped clustered collection requires the 'expireAfterSeconds' field")
	}
	return nil
}

// autoIndexIDNote is the note of create's reply when the command sets
// autoIndexId.
const autoIndexIDNote = "The autoIndexId option is deprecated and will be removed in a future release"

func dropCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd, r.DB)
	if err != nil {
		return nil, err
	}
	// The drop command refuses the oplog of a replica set member first
	// (CmdDrop's typedRun, ns().isOplog()).
	if r.DB == engine.OplogDB && strings.HasPrefix(name, "oplog.") && s.ReplSetName != "" && !r.fromOplog {
		return nil, mongoerr.New(mongoerr.DropLiveOplog, "can't drop live oplog while replicating")
	}
	ts, err := s.timeseriesOf(r, r.DB, name)
	if err == nil {
		err = s.checkDropUUID(r, name, ts)
	}
	// While the database's view catalog is invalid, MongoDB drops a name
	// the catalog holds no view of as one that does not exist, after the
	// collectionUUID check (dropCollection's InvalidViewDefinition
	// handler in drop_collection.cpp); a view's drop fails.
	invalidViews := mongoerr.Is(err, mongoerr.InvalidViewDefinition)
	if invalidViews {
		if err = s.checkDropUUID(r, name, nil); err == nil && s.hasViewDoc(r, name) {
			err = invalidViewCatalog()
		}
	}
	if err != nil {
		return nil, err
	}
	// (an invalid catalog has no view of name here)
	if !invalidViews {
		if dropped, err := s.dropView(r, name); dropped || err != nil {
			if err != nil {
				return nil, err
			}
			// A view's drop answers its ns; a time series collection's also
			// its buckets' nIndexesWas (MongoDB's _dropView and the buckets'
			// drop fill one reply).
			var reply bson.D
			if ts != nil {
				if b := s.Engine.Collection(r.DB, ts.buckets); b != nil {
					reply = append(reply, bson.E{Key: "nIndexesWas", Value: int32(b.IndexCount())})
				}
				if err := s.dropTimeseries(r, ts); err != nil {
					return nil, err
				}
			}
			return marshal(append(reply, bson.E{Key: "ns", Value: r.DB + "." + name})), nil
		}
	}
	c := s.Engine.Collection(r.DB, name)
	if c != nil && !r.fromOplog {
		if err := s.checkDroppable(r, name); err != nil {
			return nil, err
		}
	}
	existed, err := s.Engine.DropCollection(r.DB, name)
	if err != nil || !existed || c == nil {
		return nil, err
	}
	s.tsOpen.forget(r.DB + "." + name) // a buckets collection dropped directly
	if err := s.forgetSharded(c); err != nil {
		return nil, err
	}
	return marshal(bson.D{{Key: "nIndexesWas", Value: int32(c.IndexCount())}, {Key: "ns", Value: r.DB + "." + name}}), nil
}

// checkDroppable is the drop command's refusal of an existing system
// collection (MongoDB's DatabaseImpl::dropCollection, which applyOps'
// drops skip): system.profile while the database is profiled,
// system.views while time series collections are defined in it, and a
// system collection engine.DroppableSystemCollection does not list.
func (s *Service) checkDroppable(r *Request, name string) error {
	switch {
	case !strings.HasPrefix(name, "system."):
		return nil
	case name == engine.ProfileCollection:
		if s.prof.of(r.DB).level > 0 {
			return mongoerr.New(mongoerr.IllegalOperation, "turn off profiling before dropping system.profile collection")
		}
		return nil
	case name == engine.ViewsCollection:
		// (invalid view definitions do not keep system.views, which
		// holds them, from being dropped)
		views, err := s.views(r, r.DB)
		if mongoerr.Is(err, mongoerr.InvalidViewDefinition) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, v := range views {
			if strings.HasPrefix(v.viewOn, timeseries.BucketsPrefix) {
				return mongoerr.New(mongoerr.CommandFailed, "cannot drop collection %s.%s when time-series collections are present.", r.DB, name)
			}
		}
		return nil
	case !engine.DroppableSystemCollection(r.DB, name):
		return mongoerr.New(mongoerr.IllegalOperation, "can't drop system collection %s.%s", r.DB, name)
	}
	return nil
}

// dropDatabaseCmd drops r.DB. Its parameter must be 1, read as a
// safeInt64 (1.9 is 1; a string is TypeMismatch), as MongoDB's IDL reads
// it: {dropDatabase: 0} drops nothing.
func dropDatabaseCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.first()
	n, ok := safeInt64(v)
	if !ok {
		return nil, wrongType("dropDatabase", "dropDatabase", v, "[long, int, decimal, double]")
	}
	if n != 1 {
		return nil, mongoerr.New(mongoerr.DropDatabaseNotOne, "Have to pass 1 as 'dropDatabase' parameter")
	}
	switch {
	case r.DB == "admin":
		// It holds the users and roles.
		return nil, mongoerr.New(mongoerr.IllegalOperation, "Dropping the 'admin' database is prohibited.")
	case r.DB == "local" && s.ReplSetName != "":
		// It holds the oplog.
		return nil, mongoerr.New(mongoerr.IllegalOperation, "Cannot drop 'local' database while replication is active")
	}
	colls := s.Engine.Collections(r.DB)
	if err := s.ops.databaseDrop(func() error { return s.Engine.DropDatabase(r.DB) }); err != nil {
		return nil, err
	}
	// its profiling level goes too: the drop itself is not profiled
	s.prof.forget(r.DB)
	for _, c := range colls {
		// the open buckets and execution statistics of its time series
		// collections go, as MongoDB's bucket catalog clears a dropped
		// database's namespaces
		s.tsOpen.forget(r.DB + "." + c.Name)
		if err := s.forgetSharded(c); err != nil {
			return nil, err
		}
	}
	return nil, s.forgetShardedDB(r.DB)
}

// collectionInfo is a collection as listCollections describes it.
func collectionInfo(c *engine.Collection, nameOnly bool) bson.D {
	if nameOnly {
		return bson.D{{Key: "name", Value: c.Name}, {Key: "type", Value: "collection"}}
	}
	d := bson.D{
		{Key: "name", Value: c.Name},
		{Key: "type", Value: "collection"},
		{Key: "options", Value: c.CurrentOptions().Doc()},
		{Key: "info", Value: bson.D{
			{Key: "readOnly", Value: false},
			{Key: "uuid", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}},
		}},
	}
	if id := c.Options.IDIndex(); id != nil {
		// A clustered collection's _id index is its clustered index,
		// given in its options.
		d = append(d, bson.E{Key: "idIndex", Value: id})
	}
	return d
}

// oplogOptions are local.oplog.rs's options as collStats reports them:
// capped at the oplog's bound.
func oplogOptions(e *engine.Engine) engine.CollectionOptions {
	_, limit := e.OplogInfo()
	return engine.CollectionOptions{Capped: true, Size: limit}
}

// oplogInfo is local.oplog.rs as listCollections describes it, as MongoDB
// does a replica set member's: capped at the oplog's bound, without an _id
// index.
func (s *Service) oplogInfo(nameOnly bool) bson.D {
	d := bson.D{{Key: "name", Value: engine.OplogColl}, {Key: "type", Value: "collection"}}
	if nameOnly {
		return d
	}
	uuid, limit := s.Engine.OplogInfo()
	return append(d,
		bson.E{Key: "options", Value: bson.D{{Key: "capped", Value: true}, {Key: "size", Value: limit}, {Key: "autoIndexId", Value: false}}},
		bson.E{Key: "info", Value: bson.D{{Key: "readOnly", Value: false}, {Key: "uuid", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: uuid[:]}}}})
}

// idIndexSpec is the _id index of c as listIndexes reports it: with the
// collection's default collation, which orders its _id values; a clustered
// collection's is its clustered index; a time series collection's buckets
// have none (nil), as in MongoDB, which clusters them itself.
func idIndexSpec(c *engine.Collection) bson.D {
	if d := clusteredIndexSpec(c); d != nil {
		return d
	}
	return c.Options.IDIndex()
}

func listCollectionsCmd(s *Service, r *Request) (bson.Raw, error) {
	filter, nameOnly := r.args.doc("filter"), r.args.bool("nameOnly")
	batchSize := int64(noBatchSize)
	if c := r.args.doc("cursor"); c != nil {
		var err error
		if batchSize, err = cursorBatchSize(listCollectionsCursorSpec, c); err != nil {
			return nil, err
		}
	}
	f, err := compileCatalogFilter(filter)
	if err != nil {
		return nil, err
	}
	mayList, err := s.listableCollections(r)
	if err != nil {
		return nil, err
	}
	// The order is MongoDB's (its listCollections reads the collection
	// catalog, then the view catalog): the collections, each time series
	// collection just before its buckets collection, as MongoDB lists it
	// when it reaches the buckets; then the views. Collections come in
	// name order here where MongoDB's catalog has its own.
	type listed struct {
		name string
		view bool
		key  string // the collection it is listed by
		doc  bson.Raw
	}
	// A filter naming one collection (drivers ask so before creating
	// one) is answered without describing every other.
	name, named := filterName(filter)
	colls := s.Engine.Collections
	if named {
		colls = func(db string) []*engine.Collection { return s.Engine.CollectionsNamed(db, name) }
	}
	var all []listed
	for _, c := range colls(r.DB) {
		all = append(all, listed{c.Name, false, c.Name, marshal(collectionInfo(c, nameOnly))})
	}
	if s.Engine.IsOplog(r.DB, engine.OplogColl) && (!named || name == engine.OplogColl) {
		all = append(all, listed{engine.OplogColl, false, engine.OplogColl, marshal(s.oplogInfo(nameOnly))})
	}
	var views []*viewDef
	if !selectsCollectionsOnly(filter) {
		var err error
		if views, err = s.views(r, r.DB); err != nil {
			return nil, err
		}
	}
	for _, v := range views {
		if named && v.name != name {
			continue
		}
		info, isTS := s.tsInfo(r, v, nameOnly)
		if !isTS {
			all = append(all, listed{v.name, true, v.name, marshal(viewInfo(v, nameOnly))})
			continue
		}
		all = append(all, listed{v.name, false, v.viewOn, marshal(info)})
	}
	slices.SortFunc(all, func(a, b listed) int {
		switch {
		case a.view != b.view:
			if a.view {
				return 1
			}
			return -1
		case a.key != b.key:
			return strings.Compare(a.key, b.key)
		case a.name == a.key:
			// a collection after the time series collection it buckets
			return 1
		case b.name == b.key:
			return -1
		}
		return strings.Compare(a.name, b.name)
	})
	var batch []bson.Raw
	for _, l := range all {
		if !mayList(l.name) {
			continue
		}
		matched, _, err := f.MatchErr(l.doc)
		if err != nil {
			return nil, err
		}
		if matched {
			batch = append(batch, l.doc)
		}
	}
	return s.serveList(r, listCollectionsCursor, batch, batchSize)
}

// collectionsOnlyFilter is the filter with which listCollections leaves
// the views out without reading them (ListCollectionsFilter's
// makeTypeCollectionFilter, which collection cloners send): given it,
// invalid view definitions do not fail the command.
var collectionsOnlyFilter = marshal(bson.D{{Key: "$or", Value: bson.A{
	bson.D{{Key: "type", Value: "collection"}},
	bson.D{{Key: "type", Value: bson.D{{Key: "$exists", Value: false}}}},
}}})

// selectsCollectionsOnly reports whether filter is collectionsOnlyFilter,
// compared as MongoDB's SimpleBSONObjComparator compares documents.
func selectsCollectionsOnly(filter bson.Raw) bool {
	return len(filter) > 5 && values.CompareDocuments(filter, collectionsOnlyFilter) == 0
}

// filterName is the name a listCollections filter requires, when it has a
// top-level name field with a string value: only the collection or view
// of that name can match it (the filter still judges that one).
func filterName(filter bson.Raw) (string, bool) {
	it := rawdoc.Iterate(filter)
	for {
		k, v, ok := it.Next()
		if !ok {
			return "", false
		}
		if string(k) == "name" {
			name, isStr := v.StringValueOK()
			return name, isStr
		}
	}
}

// renameCollectionCmd runs {renameCollection: "db.from", to: "db.to",
// dropTarget: bool} on the admin database.
func renameCollectionCmd(s *Service, r *Request) (bson.Raw, error) {
	from, ok := r.args.first().StringValueOK()
	if !ok {
		return nil, wrongType("renameCollection", "renameCollection", r.args.first(), "string")
	}
	to := r.args.str("to")
	// Each name is valid as NamespaceString::isValid has it: a valid
	// database name (a '$' allowed) and a collection.
	fromDB, fromColl, _ := strings.Cut(from, ".")
	toDB, toColl, _ := strings.Cut(to, ".")
	if !nsname.ValidDB(fromDB, true) || fromColl == "" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid source namespace: %s", strings.ToValidUTF8(from, "\uFFFD"))
	}
	if !nsname.ValidDB(toDB, true) || toColl == "" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid target namespace: %s", strings.ToValidUTF8(to, "\uFFFD"))
	}
	dropTarget, targetUUID := false, []byte(nil)
	switch v := r.args.value("dropTarget"); v.Type {
	case bson.TypeBoolean:
		dropTarget = v.Boolean()
	case bson.TypeBinary:
		dropTarget = true
		_, targetUUID = v.Binary()
	}
	if err := s.checkRenameUUIDs(r, fromDB, fromColl, toDB, toColl, targetUUID); err != nil {
		return nil, err
	}
	sharded, err := s.findConfigDoc(configColls, from)
	if err != nil {
		return nil, err
	}
	if sharded != nil && fromDB != toDB {
		return nil, mongoerr.New(mongoerr.CommandFailed, "Source and destination collections must be on the same database.")
	}
	// Views live in system.views, which the engine's catalog does not
	// hold: a view is neither renamed nor renamed over.
	if v, err := s.lookupView(r, fromDB, fromColl); err != nil || v != nil {
		if err == nil {
			err = mongoerr.New(mongoerr.CommandNotSupportedOnView, "cannot rename view: %s", from)
		}
		return nil, err
	}
	if v, err := s.lookupView(r, toDB, toColl); err != nil || v != nil {
		if err == nil {
			err = mongoerr.New(mongoerr.NamespaceExists, "a view already exists with that name: %s", to)
		}
		return nil, err
	}
	target := s.Engine.Collection(toDB, toColl)
	if err := s.Engine.RenameCollection(fromDB, fromColl, toDB, toColl, dropTarget); err != nil {
		return nil, err
	}
	return nil, s.renameSharded(sharded, to, target)
}

// createViewCmd runs create with viewOn (and pipeline): options other than
// those are not a view's; a view's own collation is not supported.
func createViewCmd(s *Service, r *Request, name string) error {
	// The name is one a client may create (userAllowedCreateNS), and not
	// system.profile or system.views, as MongoDB's _createView refuses.
	if err := engine.ValidateNamespace(r.DB, name); err != nil {
		return err
	}
	if name == engine.ProfileCollection {
		return mongoerr.New(mongoerr.IllegalOperation, "Cannot create system.profile as a view")
	}
	if r.Txn != nil {
		return mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot create a view in a multi-document transaction.")
	}
	if !r.args.has("viewOn") {
		return mongoerr.New(mongoerr.InvalidOptions, "'pipeline' requires 'viewOn' to also be specified")
	}
	// createCollection refuses a clustered view before it makes one; a
	// clusteredIndex of false asks for no clustering.
	if r.args.has("clusteredIndex") {
		if _, on, err := parseClusteredIndex(r.args.value("clusteredIndex")); err != nil || on {
			if err == nil {
				err = mongoerr.New(mongoerr.ClusteredView, "The 'clusteredIndex' option is not supported with views")
			}
			return err
		}
	}
	for _, f := range r.args.present() {
		switch f {
		case "viewOn", "pipeline", "collation":
		default:
			return mongoerr.New(mongoerr.InvalidOptions, "option not supported on a view: %s", f)
		}
	}
	if name == engine.ViewsCollection {
		return mongoerr.New(mongoerr.InvalidNamespace, "Cannot create a view called '%s': this is a reserved system namespace", name)
	}
	var pipeline []bson.Raw
	if r.args.has("pipeline") {
		var err error
		if pipeline, err = r.args.docs("pipeline"); err != nil {
			return err
		}
	}
	var coll bson.Raw
	if d := r.args.doc("collation"); d != nil {
		c, err := collation.Parse(d)
		if err != nil {
			return err
		}
		if c != nil {
			coll = c.Document()
		}
	}
	return s.createView(r, name, r.args.str("viewOn"), pipeline, coll)
}
