package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// Clustered collections (create's clusteredIndex): Folio stores every
// collection's documents in _id order already, so a clustered collection is
// an ordinary one that describes itself as clustered, as MongoDB 7.0 does:
// its options hold the clustered index, listCollections gives no separate
// idIndex, and listIndexes shows the _id index with clustered: true.
// https://www.mongodb.com/docs/v7.0/core/clustered-collections/

// parseClusteredIndex reads create's clusteredIndex: {key: {_id: 1},
// unique: true, name?, v?}, returned normalized; or the boolean form,
// which returns nil. MongoDB keeps the boolean form (clusteredIndex: true,
// or a number other than 0, its IDL type being safeBool)
// for the collections it clusters itself, a time series collection's
// buckets, and refuses each form where the other belongs; false asks for
// a collection that is not clustered.
func parseClusteredIndex(v bson.RawValue, buckets bool) (bson.Raw, error) {
	legacyFormat := mongoerr.New(mongoerr.ClusteredIndexLegacyFormat, "The 'clusteredIndex' legacy format {clusteredIndex: <bool>} is only supported for specific internal collections and vice versa")
	spec, ok := v.DocumentOK()
	on := !ok && values.Truthy(v) // safeBool: a number is true unless zero
	switch {
	case ok && buckets, on && !buckets:
		return nil, legacyFormat
	case !ok && !on && buckets:
		// Folio clusters every time series collection's buckets by their
		// timeseries options.
		return nil, notImplementedCreateOption("clusteredIndex: false on a time series buckets collection")
	case !ok:
		return nil, nil
	}
	var key bson.Raw
	var unique, haveUnique bool
	name := "_id_"
	elems, _ := spec.Elements()
	for _, e := range elems {
		ev := e.Value()
		wrong := func(want string) error {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'create.clusteredIndex.%s' is the wrong type '%s', expected type '%s'", e.Key(), values.TypeName(ev.Type), want)
		}
		switch e.Key() {
		case "key":
			if key, ok = ev.DocumentOK(); !ok {
				return nil, wrong("object")
			}
		case "unique":
			if unique, ok = ev.BooleanOK(); !ok {
				return nil, wrong("bool")
			}
			haveUnique = true
		case "name":
			if name, ok = ev.StringValueOK(); !ok {
				return nil, wrong("string")
			}
		case "v":
			n, ok := values.Int64(ev)
			if !ok {
				return nil, wrong("int")
			}
			if n != 2 {
				return nil, mongoerr.New(mongoerr.InvalidIndexSpecificationOption, "Invalid clusteredIndex 'v' value %d: only v: 2 is supported", n)
			}
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field 'create.clusteredIndex.%s' is an unknown field.", e.Key())
		}
	}
	switch {
	case key == nil:
		return nil, mongoerr.MissingField("create.clusteredIndex.key")
	case !haveUnique:
		return nil, mongoerr.MissingField("create.clusteredIndex.unique")
	case !unique:
		return nil, mongoerr.New(mongoerr.ClusteredIndexNotUnique, "The clusteredIndex option requires unique: true to be specified")
	case !clusterKeyOnID(key):
		return nil, mongoerr.New(mongoerr.InvalidIndexSpecificationOption, "The clusteredIndex option is only supported for key: {_id: 1}")
	}
	return marshal(bson.D{
		{Key: "v", Value: int32(2)},
		{Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}},
		{Key: "name", Value: name},
		{Key: "unique", Value: true},
	}), nil
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
// listIndexes shows it, or nil when c is not clustered.
func clusteredIndexSpec(c *engine.Collection) bson.D {
	ci := c.Options.ClusteredIndex
	if len(ci) == 0 {
		return nil
	}
	var d bson.D
	if err := bson.Unmarshal(ci, &d); err != nil {
		return nil
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
	name := "_id_"
	if ci := c.Options.ClusteredIndex; len(ci) > 0 {
		if n, ok := ci.Lookup("name").StringValueOK(); ok {
			name = n
		}
	}
	return slices.Contains(names, name)
}
