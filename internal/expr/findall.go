package expr

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// $_internalFindAllValuesAtPath is the expression MongoDB's distinct on a
// view runs: {$_internalFindAllValuesAtPath: "a.b"} is the distinct values
// (under the collation, in MongoDB's order) at the dotted path of $$ROOT,
// read as a distinct on a collection reads them (rawdoc.AllAlongPath).
func init() {
	register(map[string]opCompiler{"$_internalFindAllValuesAtPath": compileFindAllValuesAtPath})
}

func compileFindAllValuesAtPath(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
	path, ok := v.StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "%s requires a field path string, found: %s", name, typeName(v))
	}
	if err := CheckFieldPath(path); err != nil {
		return nil, err
	}
	c.readField(path)
	parts, coll := strings.Split(path, "."), s.Collator()
	return &Expr{eval: func(st *state) (bson.RawValue, error) {
		set := newSet(coll)
		rawdoc.AllAlongPath(st.root, parts, set.add)
		return set.sorted(), nil
	}}, nil
}
