package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/values"
)

// Clustered collections (create's clusteredIndex): Folio stores every
// collection's documents in _id order already, so a clustered collection is
// an ordinary one that describes itself as clustered, as MongoDB 7.0 does:
// its options hold the clustered index, listCollections gives no separate
// idIndex, and listIndexes shows the _id index with clustered: true.
// https://www.mongodb.com/docs/v7.0/core/clustered-collections/

// clusteredIndexOption is create's clusteredIndex document as its IDL
// reads it (ClusteredIndexSpec): the fields' types, no other field, key
// and unique present; its rules (checkClusteredIndex) come later, where
// MongoDB's createCollection applies them.
type clusteredIndexOption struct {
	key    bson.Raw
	unique bool
	name   string
	v      int64
}

// parseClusteredIndex reads create's clusteredIndex: {key: {_id: 1},
// unique: true, name?, v?}; or the boolean form, which returns nil and
// whether it is on. MongoDB keeps the boolean form (clusteredIndex: true,
// or a number other than 0, its IDL type being safeBool) for the
// collections it clusters itself, a time series collection's buckets;
// false asks for a collection that is not clustered.
func parseClusteredIndex(v bson.RawValue) (*clusteredIndexOption, bool, error) {
	spec, ok := v.DocumentOK()
	if !ok {
		return nil, values.Truthy(v), nil // safeBool: a number is true unless zero
	}
	o := &clusteredIndexOption{name: "_id_", v: 2}
	haveUnique := false
	elems, _ := spec.Elements()
	for _, e := range elems {
		ev := e.Value()
		wrong := func(want string) error {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.clusteredIndex.%s' is the wrong type '%s', expected type '%s'", e.Key(), values.TypeName(ev.Type), want)
		}
		switch e.Key() {
		case "key":
			if o.key, ok = ev.DocumentOK(); !ok {
				return nil, false, wrong("object")
			}
		case "unique":
			if o.unique, ok = ev.BooleanOK(); !ok {
				return nil, false, wrong("bool")
			}
			haveUnique = true
		case "name":
			if o.name, ok = ev.StringValueOK(); !ok {
				return nil, false, wrong("string")
			}
		case "v":
			if o.v, ok = values.Int64(ev); !ok {
				return nil, false, wrong("int")
			}
		default:
			return nil, false, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'create.clusteredIndex.%s' is an unknown field.", e.Key())
		}
	}
	switch {
	case o.key == nil:
		return nil, false, mongoerr.MissingField("create.clusteredIndex.key")
	case !haveUnique:
		return nil, false, mongoerr.MissingField("create.clusteredIndex.unique")
	}
	return o, true, nil
}

// spec is the clustered index as the collection's options keep it and
// listCollections and listIndexes show it.
func (o *clusteredIndexOption) spec() bson.Raw {
	var v any = o.v
	if o.v == int64(int32(o.v)) {
		v = int32(o.v)
	}
	return marshal(bson.D{
		{Key: "v", Value: v},
		{Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}},
		{Key: "name", Value: o.name},
		{Key: "unique", Value: o.unique},
	})
}

// checkClusteredIndex applies MongoDB's rules of a clusteredIndex document
// that its createCollection applies after the command's own checks
// (_createCollection, then validateClusteredIndexSpec), in their order:
// autoIndexId: false refused (6026501), unique: true, the key {_id: 1},
// the collection's expireAfterSeconds (ttl, when given) as a clustered
// collection's, and v: 2 (5979704).
func checkClusteredIndex(o *clusteredIndexOption, autoIndexID *bool, ttl *int64) error {
	switch {
	case autoIndexID != nil && !*autoIndexID:
		return mongoerr.New(mongoerr.ClusteredNoAutoIndexID, "The 'clusteredIndex' option does not support {autoIndexId: false}")
	case !o.unique:
		return mongoerr.New(mongoerr.ClusteredIndexNotUnique, "The clusteredIndex option requires unique: true to be specified")
	case !clusterKeyOnID(o.key):
		return mongoerr.New(mongoerr.InvalidIndexSpecificationOption, "The clusteredIndex option is only supported for key: {_id: 1}")
	}
	if ttl != nil {
		if err := checkClusteredTTL(*ttl); err != nil {
			return err
		}
	}
	if o.v != 2 {
		return mongoerr.New(mongoerr.ClusteredIndexVersion, "Invalid clusteredIndex specification %s; cannot create a clusteredIndex with v=%d", values.ShellDoc(o.spec()), o.v)
	}
	return nil
}

// clusterKeyOnID reports whether a clusteredIndex key is {_id: 1}:
// MongoDB's validateClusteredIndexSpec compares the key with
// BSON("_id" << 1) as BSON (numbers by value), so {_id: 1.0} is one and
// {_id: -1} or {_id: 1.5} are not.
func clusterKeyOnID(key bson.Raw) bool {
	elems, err := key.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "_id" {
		return false
	}
	f, ok := values.Float64(elems[0].Value())
	return ok && f == 1
}

// clusteredIndexSpec is the _id index of a clustered collection c as
// listIndexes shows it, or nil when c is not clustered: the clustered
// index, the collection's collation when it has one, then clustered: true
// (MongoDB's formatClusterKeyForListIndexes).
func clusteredIndexSpec(c *engine.Collection) bson.D {
	ci := c.Options.ClusteredIndex
	if len(ci) == 0 {
		return nil
	}
	var d bson.D
	if err := bson.Unmarshal(ci, &d); err != nil {
		return nil
	}
	if len(c.Options.Collation) > 0 {
		d = append(d, bson.E{Key: "collation", Value: c.Options.Collation})
	}
	return append(d, bson.E{Key: "clustered", Value: true})
}

// dropsClusteredIndex reports whether a dropIndexes of names (or of the
// index keyed byKey) names the clustered index of c, which is no entry of
// its index catalog to drop: by its name, alone or in a list, or by its
// key, compared as BSON (MongoDB's containsClusteredIndex). A time series
// collection's buckets are clustered under the name _id_.
func dropsClusteredIndex(c *engine.Collection, names []string, byKey bson.Raw) bool {
	if !c.Clustered() {
		return false
	}
	if byKey != nil {
		return clusterKeyOnID(byKey)
	}
	return slices.Contains(names, c.Options.ClusteredName())
}

// clusteredIndexOf is the clustered index of collection c as MongoDB's
// catalog describes it (a time series collection's buckets keep no
// description: theirs is the legacy form's).
func clusteredIndexOf(c *engine.Collection) bson.Raw {
	if ci := c.Options.ClusteredIndex; len(ci) > 0 {
		return ci
	}
	return (&clusteredIndexOption{key: planner.IDKeyPattern, unique: true, name: planner.IDIndexName, v: 2}).spec()
}

// checkClusteredSpec applies MongoDB's rules of an index specification on
// collection c (the catalog's isSpecOKClusteredIndexCheck) when c is
// clustered or the specification has the clustered option: given is the
// specification as validated (fixedIndexSpec). The option asks for an
// index of the cluster key (6243700); an index named as the clustered
// index must have its key (6100906); one of the cluster key (a single
// numeric key on _id, whatever its name) is the clustered index, which
// exists, if it agrees with its v (6100908) and unique (6100909). It
// reports whether spec is that index.
func checkClusteredSpec(c *engine.Collection, spec engine.IndexSpec, given bson.Raw) (bool, error) {
	keysMatch := false
	if c.Clustered() {
		elems, _ := spec.Key.Elements()
		keysMatch = len(elems) == 1 && elems[0].Key() == "_id" && values.IsNumber(elems[0].Value().Type)
	}
	if spec.Clustered && !keysMatch {
		return false, mongoerr.New(mongoerr.ClusteredIndexMismatch, "Cannot create index with option 'clustered' that does not match an existing clustered index")
	}
	namesMatch := spec.Name == c.Options.ClusteredName()
	switch {
	case !keysMatch && !namesMatch:
		return false, nil
	case !keysMatch:
		return false, mongoerr.New(mongoerr.ClusteredIndexNameTaken, "Cannot create an index where the name matches the clusteredIndex but the key does not - indexSpec: %s, clusteredIndex: %s", values.ShellDoc(given), values.ShellDoc(clusteredIndexOf(c)))
	case spec.Version == 1:
		return false, mongoerr.New(mongoerr.ClusteredIndexOtherVersion, "Cannot create an index with the same key pattern as the collection's clusteredIndex but a different 'v' field")
	}
	// BSONObj::getBoolField reads a unique that is not a boolean as false
	if u := given.Lookup("unique"); u.Type != 0 && !(u.Type == bson.TypeBoolean && u.Boolean()) {
		return false, mongoerr.New(mongoerr.ClusteredIndexOtherUnique, "Cannot create an index with the same key pattern as the collection's clusteredIndex but a different 'unique' field")
	}
	return true, nil
}
