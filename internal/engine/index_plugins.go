package engine

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// pluginField is the index field of a key pattern entry naming an index
// type ("hashed"), or MongoDB's error for it: an unknown name fails with
// CannotCreateIndex, a type Folio does not build with NotImplemented.
func pluginField(path, plugin string) (IndexField, error) {
	f := IndexField{Path: path, Parts: strings.Split(path, ".")}
	switch plugin {
	case "hashed":
		f.Hashed = true
		return f, nil
	case "2dsphere":
		f.Geo = true
		return f, nil
	case bucketGeoPlugin:
		f.Geo, f.GeoBucket = true, true
		return f, nil
	case "2d":
		f.Flat = true
		return f, nil
	case "geoHaystack":
		// MongoDB 5.0 removed them.
		return f, mongoerr.New(mongoerr.CannotCreateIndex, "GeoHaystack indexes cannot be created in version 5.0 and above")
	case "wildcard":
		return f, mongoerr.New(mongoerr.WildcardPluginName, "the 'wildcard' index type is named by a \"$**\" key, not %s: \"wildcard\"", path)
	case "text", "columnstore":
		return f, mongoerr.New(mongoerr.NotImplemented, "Folio does not support %q indexes yet", plugin)
	}
	return f, mongoerr.New(mongoerr.CannotCreateIndex, "Unknown index plugin '%s'", plugin)
}

// onePlugin refuses a key pattern naming two index types, as MongoDB's
// validateKeyPattern: the index's type is its first string value, or
// wildcard when a wildcard field comes first (findPluginName), and every
// string value must name it.
func onePlugin(elems []bson.RawElement) error {
	plugin := ""
	for _, el := range elems {
		name, isString := el.Value().StringValueOK()
		switch {
		case isString && plugin == "":
			plugin = name
		case isString && name != plugin:
			return mongoerr.New(mongoerr.CannotCreateIndex, "Can't use more than one index plugin for a single index.")
		case plugin == "" && isWildcardKey(el.Key()):
			plugin = "wildcard"
		}
	}
	return nil
}

// checkPlugins applies MongoDB's rules on an index's typed fields: at most
// one hashed field (31303), and no unique hashed index (16764).
func checkPlugins(ix *Index, spec IndexSpec) error {
	hashed := 0
	for _, f := range ix.Fields {
		if f.Hashed {
			hashed++
		}
	}
	switch {
	case hashed > 1:
		return mongoerr.New(mongoerr.HashedFieldsMax, "A maximum of one index field is allowed to be hashed but found %d for 'key' %s", hashed, values.ShellDoc(spec.Key))
	case hashed == 1 && ix.Unique:
		return mongoerr.New(mongoerr.HashedUnique, "Currently hashed indexes cannot guarantee uniqueness. Use a regular index.")
	}
	return nil
}
