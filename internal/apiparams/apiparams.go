// Package apiparams holds a request's Stable API parameters (apiVersion,
// apiStrict, apiDeprecationErrors). A transaction's later commands and a
// cursor's getMores must give the same parameters as the command that
// started them (APIMismatchError), so sessions and cursors keep them.
package apiparams

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/values"
)

// Params are the Stable API parameters one request gave. Two requests gave
// the same parameters exactly when their Params are equal: apiStrict: false
// differs from no apiStrict, as in MongoDB's comparison.
type Params struct {
	// HasVersion: apiVersion was given, the empty string included (which
	// MongoDB refuses as a version other than "1").
	HasVersion                              bool
	Version                                 string
	HasStrict, Strict                       bool
	HasDeprecationErrors, DeprecationErrors bool
}

// String is p as MongoDB prints a request's API parameters in its
// APIMismatchError messages: "{}" for none.
func (p Params) String() string {
	if p == (Params{}) {
		return "{}"
	}
	raw, err := bson.Marshal(p.Doc())
	if err != nil {
		panic(err) // a bson.D of strings and booleans always marshals
	}
	return values.ShellDoc(raw)
}

// Doc is the parameters given, in the order apiVersion, apiStrict,
// apiDeprecationErrors (MongoDB's APIParameters::toBSON).
func (p Params) Doc() bson.D {
	d := bson.D{}
	if p.HasVersion {
		d = append(d, bson.E{Key: "apiVersion", Value: p.Version})
	}
	if p.HasStrict {
		d = append(d, bson.E{Key: "apiStrict", Value: p.Strict})
	}
	if p.HasDeprecationErrors {
		d = append(d, bson.E{Key: "apiDeprecationErrors", Value: p.DeprecationErrors})
	}
	return d
}
